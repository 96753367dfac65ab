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

// A lease on fewer GPUs than the job's (continue_smaller) trains at their share of its speed:
// data parallelism over fewer GPUs, the same per-GPU throughput (docs/faults.md "Recovery").
double SmallerShare(const JobActorState& st, int32_t gpus) {
  return gpus > 0 && gpus < st.spec.gpus ? static_cast<double>(gpus) / st.spec.gpus : 1.0;
}

// The job's GPUs a lease on `gpus` of them does not hold (0 for a lease of the job's size).
int32_t ShortGpus(const JobActorState& st, int32_t gpus) {
  return gpus > 0 && gpus < st.spec.gpus ? st.spec.gpus - gpus : 0;
}

// unsaved_short_gpu_s after `span` of a lease on `gpus` GPUs: a checkpoint completed in the span
// leaves only the training since it, all at this lease's size.
double ShortAfter(const JobActorState& st, const LeaseSpan& span, int32_t gpus) {
  const int32_t short_gpus = ShortGpus(st, gpus);
  if (span.checkpoints > 0) return short_gpus * span.after.unsaved_train_s;
  return st.unsaved_short_gpu_s + short_gpus * span.train_s;
}

// Iterations the running lease's share makes in `seconds` of training (the emulated throughput).
int64_t IterationsAtShare(JobActorState& st, double seconds) {
  const LeaseAssembly& assembly = st.lease.assembly;
  const double gpus = std::max(1, assembly.gpus());
  double speedup = SpeedupAt(st, assembly.cpus() / gpus, assembly.memory_gb() / gpus);
  if (assembly.speed() != 1) speedup *= assembly.speed();
  speedup *= SmallerShare(st, assembly.gpus());
  return scheduling::IterationsIn(seconds, st.profile->iter_time_s, speedup, assembly.network_s());
}

// The recovery costs `d` happened: in the job's totals, and owed to its next report.
void Note(JobActorState& st, const JobRecovery& d) {
  st.account.recovery += d;
  st.unreported += d;
}

// A full lease on `gpus` GPUs ran `span` (checkpoint_cadence.hpp); `left_before` iterations were
// left at its start, `iterations_in(s)` is what s seconds of its training make.
template <class IterationsIn>
void CommitSpan(JobActorState& st, const LeaseSpan& span, int32_t gpus, int64_t left_before,
                IterationsIn iterations_in) {
  JobCheckpoint& account = st.account;
  const int32_t short_gpus = ShortGpus(st, gpus);
  JobRecovery d{.checkpoints = span.checkpoints,
                .checkpoint_s = span.checkpoint_s,
                .restart_s = span.restart_s,
                .unheld_checkpoint_gpu_s = short_gpus * span.checkpoint_s,
                .unheld_restart_gpu_s = short_gpus * span.restart_s};
  scheduling::SaveAfterSpan(st.costs, span, left_before, account.iterations_left, iterations_in,
                            &account.cadence, &d.checkpoints);
  Note(st, d);
}

// faults.recovery: each round stood as RunLease commits a lease, from the cadence. Its costs
// were in the round's report, which the scheduler made: they are the job's, not unreported.
void CreditStoodRoundsFromCadence(JobActorState& st, int32_t rounds) {
  const StandingOffer& offer = st.offer;
  JobCheckpoint& account = st.account;
  for (int32_t round = 0; round < rounds && !account.finished; ++round) {
    const scheduling::StoodRound r = scheduling::CreditStoodRound(
        st.costs, &account.cadence, account.iterations_left, offer.iteration_s, offer.lease_s);
    account.iterations_left = r.iterations_left;
    account.recovery += r.costs;
    st.unsaved_short_gpu_s = st.costs.interval_s <= 0 ? 0 : ShortAfter(st, r.span, offer.gpus);
    account.at_s += offer.lease_s;
    account.finished = r.finished;
    ++account.rounds_run;
    account.gpu_seconds += offer.gpus * offer.lease_s;
  }
}

}  // namespace

bool Runnable(const JobActorState& st) {
  const LeaseAssembly& a = st.lease.assembly;
  if (a.Runnable(st.spec.gpus)) return true;
  // Elastic (continue_smaller): a lease on what is left after a failure, down to min_gpus.
  return st.min_gpus > 0 && a.complete() && !a.refused() && a.gpus() >= st.min_gpus &&
         a.gpus() < st.spec.gpus;
}

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
  p.speedup *= SmallerShare(st, p.gpus);
  const double lease_s = assembly.end_s() - assembly.start_s();
  // Real compute: the measured job seconds per iteration take iter_time_s's place (units in
  // gpu/real_progress.hpp); a failed worker measured nothing and credits nothing.
  const auto iterations_in = [&](double seconds) {
    return st.compute
               ? gpu::IterationsFromMeasurement(seconds, lease.seconds_per_iteration, p.speedup)
               : scheduling::IterationsIn(seconds, st.profile->iter_time_s, p.speedup,
                                          assembly.network_s());
  };
  // faults.recovery: restarts and checkpoint writes take their seconds out of the training.
  LeaseSpan span;
  if (st.recovery) span = RunSpan(st.costs, st.account.cadence, lease_s);
  const int64_t possible = iterations_in(st.recovery ? span.train_s : lease_s);
  st.offer.iterations = possible;
  st.offer.gpus = p.gpus;
  st.offer.lease_s = lease_s;
  if (!st.compute) {
    st.offer.iteration_s =
        scheduling::IterationSeconds(st.profile->iter_time_s, p.speedup, assembly.network_s());
  }
  JobCheckpoint& account = st.account;
  p.iterations_done = std::min(possible, account.iterations_left);
  if (st.compute && st.compute->log) st.compute->log->Add(MeasuredOf(st, p, lease_s, possible));
  // A gang's weights advance with its progress: both are committed here, or neither.
  if (lease.trained.weights) account.gang = std::move(lease.trained);
  const int64_t left_before = account.iterations_left;
  account.iterations_left -= p.iterations_done;
  if (st.recovery) {
    CommitSpan(st, span, p.gpus, left_before, iterations_in);
    st.unsaved_short_gpu_s = st.costs.interval_s <= 0 ? 0 : ShortAfter(st, span, p.gpus);
  }
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
  if (st.recovery) return CreditStoodRoundsFromCadence(st, rounds);
  // As the scheduler credited them, round by round (scheduling/lease_credit.hpp).
  const scheduling::StoodCredit credit =
      scheduling::CreditStood(account.iterations_left, offer.iterations, rounds);
  account.iterations_left = credit.iterations_left;
  account.finished = credit.finished;
  account.rounds_run += rounds;
  account.gpu_seconds += offer.gpus * offer.lease_s * rounds;
  account.at_s += offer.lease_s * rounds;  // the rounds stood follow the lease directly
}

void OfferToStand(JobActorState& st, JobProgress* p) {
  if (!p->ran || p->finished || st.offer.iterations < 0 || p->gpus != st.spec.gpus) return;
  p->standing_iterations = st.offer.iterations;
  st.offer.parts = p->parts;
  if (st.recovery) {
    p->standing_cadence = StandingCadence{.iteration_s = st.offer.iteration_s,
                                          .interval_s = st.costs.interval_s,
                                          .write_s = st.costs.write_s,
                                          .cadence = st.account.cadence};
  }
}

void LoseSinceCheckpoint(JobActorState& st, double held_s, bool interrupted, JobProgress* p) {
  JobCheckpoint& account = st.account;
  CheckpointCadence& cadence = account.cadence;
  const LeaseSpan span = RunSpan(st.costs, cadence, held_s);
  int64_t saved = cadence.saved_iterations_left;
  if (span.cut_train_s >= 0) {  // a checkpoint of this lease was written before the failure
    saved = account.iterations_left -
            std::min(account.iterations_left, IterationsAtShare(st, span.cut_train_s));
  }
  const double lost_s = span.after.unsaved_train_s;  // since the last checkpoint written
  const int32_t gpus = st.lease.assembly.gpus();
  const int32_t short_gpus = ShortGpus(st, gpus);
  const double unheld_lost_gpu_s = ShortAfter(st, span, gpus);
  Note(st, JobRecovery{.checkpoints = span.checkpoints,
                       .checkpoint_s = span.checkpoint_s,
                       .restart_s = span.restart_s,
                       .lost_s = lost_s,
                       .cut_short_s = held_s,
                       .interruptions = interrupted ? 1 : 0,
                       .unheld_checkpoint_gpu_s = short_gpus * span.checkpoint_s,
                       .unheld_restart_gpu_s = short_gpus * span.restart_s,
                       .unheld_lost_gpu_s = unheld_lost_gpu_s,
                       .unheld_cut_short_gpu_s = short_gpus * held_s});
  account.iterations_left = saved;
  cadence = CheckpointCadence{.saved_iterations_left = saved, .restart_left_s = st.costs.restart_s};
  p->iterations_left = saved;
  p->rolled_back = true;
  p->wasted_gpu_s = st.spec.gpus * lost_s - unheld_lost_gpu_s;
  st.unsaved_short_gpu_s = 0;
  account.wasted_gpu_s += p->wasted_gpu_s;
}

void ResumeFromCheckpoint(JobActorState& st) {
  JobCheckpoint& account = st.account;
  CheckpointCadence& cadence = account.cadence;
  if (cadence.saved_iterations_left < 0) cadence.saved_iterations_left = account.iterations_left;
  const double lost_s = cadence.unsaved_train_s;
  Note(st, JobRecovery{
               .lost_s = lost_s, .interruptions = 1, .unheld_lost_gpu_s = st.unsaved_short_gpu_s});
  account.iterations_left = cadence.saved_iterations_left;
  const double wasted_gpu_s = st.spec.gpus * lost_s - st.unsaved_short_gpu_s;
  st.unsaved_short_gpu_s = 0;
  account.wasted_gpu_s += wasted_gpu_s;
  st.unreported_wasted_gpu_s += wasted_gpu_s;
  cadence = CheckpointCadence{.saved_iterations_left = account.iterations_left,
                              .restart_left_s = st.costs.restart_s};
}

void TakeUnreported(JobActorState& st, JobProgress* p) {
  p->recovery = st.unreported;
  st.unreported = JobRecovery{};
  p->wasted_gpu_s += st.unreported_wasted_gpu_s;
  st.unreported_wasted_gpu_s = 0;
}

}  // namespace troupe
