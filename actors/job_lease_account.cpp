#include "actors/job_lease_account.hpp"

#include <algorithm>
#include <cmath>

#include "gpu/gang_exchange.hpp"
#include "scheduling/lease_credit.hpp"

namespace troupe {
namespace {

// The record of a measured lease (MeasuredLeaseLog), before it is committed.
MeasuredLease MeasuredOf(const JobActorState& st, const JobProgress& p, double lease_s,
                         int64_t possible) {
  const JobLease& lease = st.lease;
  MeasuredLease m;
  m.job_id = st.spec.job_id;
  m.round = lease.assembly.round();
  m.lease_s = lease_s;
  m.gpus = p.gpus;
  m.steps = lease.steps;
  m.seconds_per_iteration = lease.seconds_per_iteration;
  m.speedup = p.speedup;
  m.iterations_possible = possible;
  m.iterations_done = p.iterations_done;
  for (const PartDone& d : lease.done) {
    m.parts.push_back(
        PartRecord{d.server, d.pid, d.host, d.devices, d.steps, d.exchanges, d.weights_hash});
  }
  m.first_exchange = st.account.gang.exchanges;
  if (lease.trained.weights) {
    m.held_out_loss =
        gpu::GangHeldOutLoss(static_cast<uint64_t>(st.spec.job_id), *lease.trained.weights);
  }
  return m;
}

// The model's speedup at this share, read from the matrix once per distinct share.
double SpeedupAt(JobActorState& st, double cpus_per_gpu, double memory_gb_per_gpu) {
  if (cpus_per_gpu != st.speedup_cpus_per_gpu ||
      memory_gb_per_gpu != st.speedup_memory_gb_per_gpu) {
    st.speedup = st.profile->Speedup(cpus_per_gpu, memory_gb_per_gpu);
    st.speedup_cpus_per_gpu = cpus_per_gpu;
    st.speedup_memory_gb_per_gpu = memory_gb_per_gpu;
  }
  return st.speedup;
}

}  // namespace

bool Runnable(const JobActorState& st) { return st.lease.assembly.Runnable(st.spec.gpus); }

JobProgress ReportOf(const JobActorState& st, int64_t round, double lease_start_s) {
  JobProgress p;
  p.job_id = st.spec.job_id;
  p.round = round;
  p.lease_start_s = lease_start_s;
  p.iterations_left = st.account.iterations_left;
  return p;
}

// Runs the assembled lease to its end and commits its work.
JobProgress RunLease(JobActorState& st) {
  JobLease& lease = st.lease;
  LeaseAssembly& assembly = lease.assembly;
  JobProgress p = ReportOf(st, assembly.round(), assembly.start_s());
  const bool runnable = Runnable(st);  // a gang job runs on all of its GPUs or not at all
  p.gpus = assembly.gpus();
  p.cpus = assembly.cpus();
  p.memory_gb = assembly.memory_gb();
  p.parts = assembly.TakeParts();  // the lease is over: the report carries them
  st.offer.iterations = -1;
  if (!runnable) return p;
  p.ran = true;
  p.speedup = SpeedupAt(st, p.cpus / p.gpus, p.memory_gb / p.gpus);
  if (assembly.speed() != 1) p.speedup *= assembly.speed();
  const double lease_s = assembly.end_s() - assembly.start_s();
  // Real compute: the measured job seconds per iteration take iter_time_s's place (units in
  // gpu/real_progress.hpp); a failed worker measured nothing and credits nothing.
  const int64_t possible =
      st.compute ? gpu::IterationsFromMeasurement(lease_s, lease.seconds_per_iteration, p.speedup)
                 : scheduling::IterationsIn(lease_s, st.profile->iter_time_s, p.speedup,
                                            assembly.network_s());
  st.offer = StandingOffer{possible, p.gpus, lease_s};
  JobCheckpoint& account = st.account;
  p.iterations_done = std::min(possible, account.iterations_left);
  if (st.compute && st.compute->log) st.compute->log->Add(MeasuredOf(st, p, lease_s, possible));
  // A gang's weights advance with its progress: both are committed here, or neither.
  if (lease.trained.weights) account.gang = std::move(lease.trained);
  account.iterations_left -= p.iterations_done;
  account.at_s = assembly.end_s();
  account.finished = account.iterations_left == 0;
  if (account.first_start_s < 0) account.first_start_s = assembly.start_s();
  ++account.rounds_run;
  account.gpu_seconds += p.gpus * lease_s;
  p.iterations_left = account.iterations_left;
  p.finished = account.finished;
  return p;
}

// Credits the rounds the last lease stood since its report (LeaseGrant.rounds_stood) at the rate
// that report offered, as RunLease would have committed them one by one.
void CreditStoodRounds(JobActorState& st, int32_t rounds) {
  const StandingOffer& offer = st.offer;
  if (rounds <= 0 || offer.iterations < 0) return;
  JobCheckpoint& account = st.account;
  // As the scheduler credited them, round by round (scheduling/lease_credit.hpp).
  const scheduling::StoodCredit credit =
      scheduling::CreditStood(account.iterations_left, offer.iterations, rounds);
  account.iterations_left = credit.iterations_left;
  account.finished = credit.finished;
  account.rounds_run += rounds;
  account.gpu_seconds += offer.gpus * offer.lease_s * rounds;
  account.at_s += offer.lease_s * rounds;  // the rounds stood follow the lease directly
}

}  // namespace troupe
