#include "actors/job_actor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>
#include <caf/spawn_options.hpp>
#include <cmath>

#include "emulation/runtime/counted_send.hpp"
#include "emulation/runtime/fault_network.hpp"
#include "messages/atoms.hpp"

namespace troupe {
namespace {

using Self = caf::stateful_actor<JobActorState>;

// Iterations done in a lease of `seconds` at `speedup`, as Synergy's simulator counts them
// (same operation order, so the same floating-point result).
int64_t IterationsIn(double seconds, double iter_time_s, double speedup) {
  const double per_iteration = iter_time_s / speedup;
  return static_cast<int64_t>(std::floor(seconds / per_iteration));
}

// Starts a new lease, keeping the vectors' memory: a job takes a lease every round.
void ResetLease(JobLease& lease) {
  std::vector<int32_t> servers_seen = std::move(lease.servers_seen);
  std::vector<LeasePart> parts = std::move(lease.parts);
  servers_seen.clear();
  parts.clear();
  lease = JobLease{};
  lease.servers_seen = std::move(servers_seen);
  lease.parts = std::move(parts);
}

// Returns false if the grant is stale or a duplicate.
bool AddLeasePart(JobActorState& st, const LeaseGrant& grant) {
  JobLease& lease = st.lease;
  if (grant.start_s < lease.start_s) return false;
  if (grant.start_s > lease.start_s) {
    ResetLease(lease);
    lease.round = grant.round;
    lease.start_s = grant.start_s;
    lease.end_s = grant.end_s;
    lease.parts_expected = grant.parts;
    lease.scheduler = grant.scheduler ? grant.scheduler : st.scheduler;
  }
  if (lease.ended) return false;
  if (std::find(lease.servers_seen.begin(), lease.servers_seen.end(), grant.server) !=
      lease.servers_seen.end()) {
    return false;
  }
  lease.servers_seen.push_back(grant.server);
  lease.refused = lease.refused || !grant.granted;
  if (grant.granted) {
    lease.parts.push_back(LeasePart{grant.server, grant.gpu_ids, grant.cpus, grant.memory_gb});
    lease.speed = std::min(lease.speed, grant.speed);
  }
  return true;
}

// All parts granted, none refused, every GPU of the job: the lease runs.
bool Runnable(const JobActorState& st) {
  const JobLease& lease = st.lease;
  if (lease.refused || static_cast<int32_t>(lease.servers_seen.size()) != lease.parts_expected) {
    return false;
  }
  int32_t gpus = 0;
  for (const LeasePart& part : lease.parts) gpus += static_cast<int32_t>(part.gpu_ids.size());
  return gpus == st.spec.gpus;
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
  JobProgress p = ReportOf(st, lease.round, lease.start_s);
  const bool runnable = Runnable(st);  // a gang job runs on all of its GPUs or not at all
  for (const LeasePart& part : lease.parts) {
    p.gpus += static_cast<int32_t>(part.gpu_ids.size());
    p.cpus += part.cpus;
    p.memory_gb += part.memory_gb;
  }
  p.parts = std::move(lease.parts);  // the lease is over: the report carries them
  if (!runnable) return p;
  p.ran = true;
  p.speedup = st.profile->Speedup(p.cpus / p.gpus, p.memory_gb / p.gpus);
  if (lease.speed != 1) p.speedup *= lease.speed;
  const double lease_s = lease.end_s - lease.start_s;
  // Real compute: the measured job seconds per iteration take iter_time_s's place (units in
  // gpu/real_progress.hpp); a failed worker measured nothing and credits nothing.
  const int64_t possible =
      st.compute ? gpu::IterationsFromMeasurement(lease_s, lease.seconds_per_iteration, p.speedup)
                 : IterationsIn(lease_s, st.profile->iter_time_s, p.speedup);
  JobCheckpoint& account = st.account;
  p.iterations_done = std::min(possible, account.iterations_left);
  if (st.compute && st.compute->log) {
    st.compute->log->Add(MeasuredLease{st.spec.job_id, lease.round, lease_s, p.gpus, lease.steps,
                                       lease.seconds_per_iteration, p.speedup, possible,
                                       p.iterations_done});
  }
  account.iterations_left -= p.iterations_done;
  account.at_s = lease.end_s;
  account.finished = account.iterations_left == 0;
  if (account.first_start_s < 0) account.first_start_s = lease.start_s;
  ++account.rounds_run;
  account.gpu_seconds += p.gpus * lease_s;
  p.iterations_left = account.iterations_left;
  p.finished = account.finished;
  return p;
}

// Stops a compute worker whose answer is no longer wanted.
void StopWorker(Self* self, caf::actor& worker) {
  if (!worker) return;
  self->send_exit(worker, caf::exit_reason::user_shutdown);
  worker = caf::actor{};
}

void Report(Self* self, JobProgress progress) {
  JobActorState& st = self->state;
  StopWorker(self, st.lease.worker);
  st.lease.ended = true;
  if (st.checkpoints) Tell(self, st.telemetry, st.checkpoints, st.account);
  st.last_report = progress;
  Tell(self, st.telemetry, st.lease.scheduler ? st.lease.scheduler : st.scheduler,
       std::move(progress));
}

// No grant of the lease starting at lease_start_s ever came (lost, or its server died first): the
// lease never ran, and the report says so.
void ReportLeaseNeverGranted(Self* self, int64_t round, double lease_start_s) {
  JobActorState& st = self->state;
  ResetLease(st.lease);
  st.lease.round = round;
  st.lease.start_s = lease_start_s;
  st.lease.scheduler = st.scheduler;
  Report(self, ReportOf(st, round, lease_start_s));
}

void OnLeaseLost(Self* self, const LeaseLost& lost) {
  JobActorState& st = self->state;
  JobLease& lease = st.lease;
  if (lost.lease_start_s > lease.start_s)
    return ReportLeaseNeverGranted(self, lost.round, lost.lease_start_s);
  if (lost.lease_start_s != lease.start_s || lease.ended) return;
  JobProgress p = ReportOf(st, lease.round, lease.start_s);
  if (Runnable(st)) {  // it was running: the GPU time since the lease start is lost
    const double now_s = st.clock.Seconds(self->clock().now());
    const double held_s = std::clamp(now_s - lease.start_s, 0.0, lease.end_s - lease.start_s);
    p.wasted_gpu_s = st.spec.gpus * held_s;
    st.account.wasted_gpu_s += p.wasted_gpu_s;
  }
  Report(self, std::move(p));
}

void OnProgressQuery(Self* self, const ProgressQuery& q) {
  JobActorState& st = self->state;
  auto asker = caf::actor_cast<caf::actor>(self->current_sender());
  if (asker) st.scheduler = asker;
  if (st.last_report.lease_start_s == q.lease_start_s && st.last_report.round == q.round &&
      st.lease.ended) {
    Tell(self, st.telemetry, st.scheduler, st.last_report);
    return;
  }
  if (q.lease_start_s == st.lease.start_s) {
    // Still waiting for a part that was lost: the round is over, so the lease never ran.
    if (!st.lease.ended && st.clock.Seconds(self->clock().now()) >= st.lease.end_s) {
      st.lease.scheduler = st.scheduler;
      Report(self, ReportOf(st, st.lease.round, st.lease.start_s));
    }
    return;
  }
  if (q.lease_start_s > st.lease.start_s) ReportLeaseNeverGranted(self, q.round, q.lease_start_s);
}

// Spawns the worker of a runnable lease (real compute): detached, so its blocking steps hold
// neither this actor nor a scheduler thread.
void StartWorker(Self* self) {
  JobActorState& st = self->state;
  ComputeWork work;
  work.options = st.compute->options;
  work.plan = st.step_plan;
  work.devices = st.spec.gpus;
  work.seed = static_cast<uint64_t>(st.spec.job_id);
  work.lease_start_s = st.lease.start_s;
  work.lease_end_s = st.lease.end_s;
  st.lease.worker =
      self->spawn<caf::detached>(ComputeWorkerActor, std::move(work),
                                 caf::actor_cast<caf::actor>(self), st.clock, st.telemetry);
}

// The worker's answer for the lease that started at lease_start_s: kept, and the lease committed
// if its timer has already fired. An answer for another lease, or after the report, is dropped.
void OnWorkAnswer(Self* self, double lease_start_s, double seconds_per_iteration, int64_t steps) {
  JobActorState& st = self->state;
  JobLease& lease = st.lease;
  if (lease_start_s != lease.start_s || lease.ended || !lease.worker) return;
  lease.worker = caf::actor{};  // it has quit
  lease.seconds_per_iteration = seconds_per_iteration;
  lease.steps = steps;
  if (lease.timer_fired) Report(self, RunLease(st));
}

}  // namespace

caf::behavior JobActor(Self* self, JobSpec spec, std::shared_ptr<const ModelCatalog> catalog,
                       caf::actor scheduler, RunClock clock, Telemetry* telemetry, JobStart start) {
  JobActorState& st = self->state;
  st.profile = catalog->Find(spec.model);
  st.catalog = std::move(catalog);
  st.account = start.from;
  st.account.job_id = spec.job_id;
  if (st.account.iterations_left < 0) st.account.iterations_left = spec.iterations;
  st.checkpoints = std::move(start.checkpoints);
  st.commit_at_grant = start.commit_at_grant && !start.compute;
  st.compute = std::move(start.compute);
  if (st.compute) {
    // PlanRun checked every model of the catalogue against the sizing.
    if (Status s = gpu::PlanStep(*st.profile, st.compute->options.sizing, &st.step_plan); !s.ok()) {
      spdlog::error("job {}: {}", spec.job_id, s.message());
    }
  }
  st.spec = std::move(spec);
  st.scheduler = std::move(scheduler);
  st.clock = clock;
  st.telemetry = telemetry;
  st.last_report.lease_start_s = -1;
  if (telemetry->network) {
    telemetry->network->Register(self->id(), EndpointKind::kJob, st.spec.job_id);
  }
  return {
      [=](const LeaseGrant& grant) {
        JobActorState& st = self->state;
        caf::actor previous_worker = st.lease.worker;
        if (!AddLeasePart(st, grant)) return;
        if (previous_worker && !st.lease.worker) StopWorker(self, previous_worker);  // newer lease
        if (static_cast<int32_t>(st.lease.servers_seen.size()) < st.lease.parts_expected) return;
        if (st.commit_at_grant) {
          JobProgress progress = RunLease(st);
          st.lease.ended = true;  // no ProgressQuery comes without faults: no copy kept
          TellAt(self, st.telemetry, st.clock, st.lease.scheduler, grant.end_s,
                 std::move(progress));
          return;
        }
        TellAt(self, st.telemetry, st.clock, self, grant.end_s, lease_end_atom::value,
               grant.start_s);
        if (st.compute && Runnable(st)) StartWorker(self);
      },
      [=](lease_end_atom, double lease_start_s) {
        JobActorState& st = self->state;
        if (lease_start_s != st.lease.start_s || st.lease.ended) return;
        if (st.lease.worker) {
          st.lease.timer_fired = true;  // the report waits for the worker's last step
          return;
        }
        Report(self, RunLease(st));
      },
      [=](work_done_atom, double lease_start_s, double seconds_per_iteration, int64_t steps) {
        OnWorkAnswer(self, lease_start_s, seconds_per_iteration, steps);
      },
      [=](work_fail_atom, double lease_start_s, const std::string& why) {
        spdlog::error("job {}: real compute failed, the lease at {} s credits nothing: {}",
                      self->state.spec.job_id, lease_start_s, why);
        OnWorkAnswer(self, lease_start_s, 0, 0);
      },
      [=](const LeaseLost& lost) { OnLeaseLost(self, lost); },
      [=](const ProgressQuery& query) { OnProgressQuery(self, query); },
  };
}

}  // namespace troupe
