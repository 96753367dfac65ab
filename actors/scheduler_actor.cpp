#include "actors/scheduler_actor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <cmath>
#include <tuple>

#include "actors/scheduler_internal.hpp"
#include "messages/atoms.hpp"
#include "messages/run_messages.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/fault_network.hpp"

namespace troupe {
namespace scheduler_detail {
namespace {

// True once every measured job has arrived and finished (only with a measurement window).
bool MeasuredJobsDone(const SchedulerState& st) {
  const SchedulerOptions& o = st.options;
  if (o.measure_first_job < 0) return false;
  const int64_t window = o.measure_last_job - o.measure_first_job + 1;
  const bool all_arrived = st.next_arrival_s < 0 || st.measured_arrived == window;
  return all_arrived && st.measured_ended == st.measured_arrived;
}

void EndRun(Self* self, std::string reason) {
  SchedulerState& st = self->state;
  st.ended = true;
  for (int64_t id : st.queue) {
    auto it = st.jobs.find(id);
    if (it != st.jobs.end() && !it->second.done) {
      Tell(self, st.telemetry, st.cluster.metrics, it->second.record);
    }
  }
  const double end_s = st.round >= 0 ? st.current.end_s : 0;
  Tell(self, st.telemetry, st.cluster.metrics, RunEnd{std::move(reason), end_s, st.round + 1});
  for (int64_t id : st.queue) {
    auto it = st.jobs.find(id);
    if (it != st.jobs.end() && it->second.handle) {
      self->send_exit(it->second.handle, caf::exit_reason::user_shutdown);
    }
  }
  for (const caf::actor& server : st.cluster.servers) {
    self->send_exit(server, caf::exit_reason::user_shutdown);
  }
  self->send_exit(st.cluster.workload, caf::exit_reason::user_shutdown);
  for (const caf::actor* other :
       {&st.cluster.profiler, &st.cluster.checkpoints, &st.cluster.injector}) {
    if (*other) self->send_exit(*other, caf::exit_reason::user_shutdown);
  }
  self->quit();
}

// Nothing to run: sleep until the round in which the next job arrives, or end the run.
void Idle(Self* self, double start_s) {
  SchedulerState& st = self->state;
  if (st.next_arrival_s < 0) return EndRun(self, "all jobs finished");
  const double round_s = st.options.round_s;
  double wake_s = std::ceil(st.next_arrival_s / round_s) * round_s;
  if (wake_s <= start_s) wake_s = start_s + round_s;
  TellAt(self, st.telemetry, st.clock, self, wake_s, round_end_atom::value, kWakeUp, wake_s);
}

}  // namespace

void PlanRound(Self* self, double start_s) {
  SchedulerState& st = self->state;
  FailJobsThatNoLongerFit(self);
  st.mechanism->Recycle(std::move(st.round_placements));  // the last round's storage
  st.round_placements.clear();
  st.mechanism->StartRound(st.round + 1, start_s);
  // The progress line reads it (a round's planning can take minutes: OPT on a large cluster).
  st.telemetry->planning.store(true, std::memory_order_relaxed);
  std::vector<scheduling::JobPlacement> placements = PlacePolicyOrder(st, start_s);
  st.telemetry->planning.store(false, std::memory_order_relaxed);
  NoteExpectedSpeedups(st, placements);
  if (st.queued == 0) return Idle(self, start_s);

  ++st.round;
  st.current = RoundRecord{};
  st.current.round = st.round;
  st.current.start_s = start_s;
  st.current.end_s = start_s + st.options.round_s;
  st.current.jobs_running = static_cast<int32_t>(placements.size());
  st.current.jobs_queued =
      static_cast<int32_t>(st.queued - static_cast<int64_t>(placements.size()));
  st.awaiting_reports = static_cast<int32_t>(SendLeases(self, placements));
  st.round_placements = std::move(placements);
  st.round_timer_fired = false;
  st.grace_pending = false;
  st.telemetry->virtual_s.store(start_s, std::memory_order_relaxed);
  TellAt(self, st.telemetry, st.clock, self, st.current.end_s, round_end_atom::value, st.round,
         st.current.end_s);
}

void BeginRound(Self* self, double start_s) {
  SchedulerState& st = self->state;
  if (st.options.deadline_s > 0 && start_s >= st.options.deadline_s) {
    return EndRun(self, "deadline");
  }
  if (st.next_arrival_s < 0 || st.next_arrival_s > start_s) return PlanRound(self, start_s);
  Ask(
      self, st.telemetry, st.cluster.workload, ArrivalsRequest{start_s},
      [=](ArrivalBatch& batch) {
        std::vector<ProfileAsk> asks = Admit(self, batch.jobs);
        self->state.next_arrival_s = batch.next_arrival_s;
        if (asks.empty()) return PlanRound(self, start_s);
        SchedulerState& st = self->state;
        Ask(
            self, st.telemetry, st.cluster.profiler, ProfileRequest{std::move(asks)},
            [=](ProfileBatch& profiles) {
              ApplyProfiles(self, profiles);
              PlanRound(self, start_s);
            },
            [=] { Unreachable(self, "the profiler"); }, RetryEveryRound(st));
      },
      [=] { Unreachable(self, "the workload"); }, RetryEveryRound(st));
}

void Unreachable(Self* self, const std::string& who) {
  EndRun(self, who + " is unreachable (every request dropped; a partition that never heals?)");
}

AskRetry RetryEveryRound(const SchedulerState& st) { return AskRetry{st.options.round_s, 1000}; }

void MaybeCloseRound(Self* self) {
  SchedulerState& st = self->state;
  if (!st.round_timer_fired) return;
  if (st.awaiting_reports > 0) return ArmGrace(self);
  EraseDoneJobs(st);
  if (st.options.lease_log) {
    // Reports arrive in any order in real mode; the log is sorted so both modes write the same.
    std::sort(st.round_leases.begin(), st.round_leases.end(),
              [](const LeaseRecord& a, const LeaseRecord& b) {
                return std::tie(a.job_id, a.server) < std::tie(b.job_id, b.server);
              });
    Tell(self, st.telemetry, st.cluster.metrics, LeaseBatch{std::move(st.round_leases)});
    st.round_leases.clear();
  }
  Tell(self, st.telemetry, st.cluster.metrics, st.current);
  if (MeasuredJobsDone(st)) return EndRun(self, "measured jobs finished");
  BeginRound(self, st.current.end_s);
}

void RecordFinished(Self* self, TrackedJob& job, double end_s) {
  SchedulerState& st = self->state;
  job.done = true;
  NoteDone(st, job.record.job_id);
  job.record.end_s = end_s;
  job.record.jct_s = job.record.end_s - job.record.arrival_s;
  if (st.round >= 0 && end_s == st.current.end_s) ++st.current.jobs_finished;
  if (job.record.measured) {
    ++st.measured_ended;
    st.telemetry->measured_ended.fetch_add(1, std::memory_order_relaxed);
  }
  st.telemetry->jobs_finished.fetch_add(1, std::memory_order_relaxed);
  Tell(self, st.telemetry, st.cluster.metrics, job.record);
  if (job.handle) {
    st.job_of_actor.erase(job.handle.address());
    self->demonitor(job.handle);
    self->send_exit(job.handle, caf::exit_reason::user_shutdown);
  }
}

void RecordFailed(Self* self, TrackedJob& job, const std::string& reason) {
  SchedulerState& st = self->state;
  spdlog::warn("scheduler: job {} failed: {}", job.record.job_id, reason);
  job.done = true;
  NoteDone(st, job.record.job_id);
  job.record.failure = reason;
  if (job.record.measured) {
    ++st.measured_ended;
    st.telemetry->measured_ended.fetch_add(1, std::memory_order_relaxed);
  }
  Tell(self, st.telemetry, st.cluster.metrics, job.record);
  // A scheduler that may be restarted (there is an injector) leaves word with the workload.
  if (st.cluster.injector)
    Tell(self, st.telemetry, st.cluster.workload, JobFailed{job.record.job_id});
  if (job.handle) {  // alive, but it can never run
    st.job_of_actor.erase(job.handle.address());
    self->demonitor(job.handle);
    self->send_exit(job.handle, caf::exit_reason::user_shutdown);
    job.handle = caf::actor{};
  }
}

void OnProgress(Self* self, const JobProgress& p) {
  SchedulerState& st = self->state;
  auto it = st.jobs.find(p.job_id);
  OnProgressOf(self, it == st.jobs.end() ? nullptr : &it->second, p);
}

namespace {

// A round the job ran, in its entry.
void CreditRun(const SchedulerState& st, TrackedJob& job, int32_t gpus, int64_t iterations_left) {
  job.view.iterations_left = iterations_left;
  job.view.attained_gpu_s += gpus * st.options.round_s;
  job.view.last_served_s = st.current.end_s;
  job.record.gpu_seconds += gpus * st.options.round_s;
  ++job.record.rounds_run;
  if (job.record.start_s < 0) job.record.start_s = st.current.start_s;
}

}  // namespace

void OnProgressOf(Self* self, TrackedJob* job, const JobProgress& p) {
  SchedulerState& st = self->state;
  if (job == nullptr || p.round != st.round || job->reported_round == p.round || job->done) {
    spdlog::debug("scheduler: stray progress of job {} for round {}", p.job_id, p.round);
    return;
  }
  NoteStandingOffer(st, *job, p);
  TakeProgress(self, *job, p);
}

void TakeRunGoingOn(SchedulerState& st, TrackedJob& job, int32_t gpus, int64_t iterations_left) {
  job.reported_round = static_cast<int32_t>(st.round);
  CreditRun(st, job, gpus, iterations_left);
}

void TakeProgress(Self* self, TrackedJob& job, const JobProgress& p) {
  SchedulerState& st = self->state;
  job.reported_round = static_cast<int32_t>(p.round);
  if (st.options.lease_log) {
    for (const LeasePart& part : p.parts) {
      st.round_leases.push_back(
          LeaseRecord{p.round, p.job_id, part.server, part.gpu_ids, part.cpus, part.memory_gb});
    }
  }
  job.record.wasted_gpu_s += p.wasted_gpu_s;
  if (p.ran) CreditRun(st, job, p.gpus, p.iterations_left);
  // Under a constant key (FIFO) a job that ran and goes on keeps its place in the queue's order,
  // and the starvation guard's entry for it stays a lower bound (its wait only starts later):
  // there is nothing to refile.
  if (!(st.policy->constant_key && p.ran && !p.finished)) Touch(st, p.job_id);
  if (p.finished) RecordFinished(self, job, st.current.end_s);
  --st.awaiting_reports;
  MaybeCloseRound(self);
}

bool FileForRoundEnd(Self* self, JobProgress& p) {
  SchedulerState& st = self->state;
  if (!p.for_round_end || st.round_timer_fired || p.round != st.round) return false;
  st.filed_reports.push_back(std::move(p));
  return true;
}

void OnRoundTimer(Self* self) {
  SchedulerState& st = self->state;
  st.round_timer_fired = true;
  const bool reports_due = st.awaiting_reports > 0;
  MaybeCloseRound(self);  // at once when no report is due (else it arms the grace timer)
  // The filed reports, as if each had arrived now, after the timer, in the order they were sent.
  if (reports_due) TakeRoundReports(self);
}

}  // namespace scheduler_detail

using scheduler_detail::kWakeUp;
using scheduler_detail::Self;

caf::behavior SchedulerActor(Self* self, SchedulerOptions options, ClusterHandles cluster,
                             RunClock clock, Telemetry* telemetry) {
  SchedulerState& st = self->state;
  std::vector<scheduling::ServerShape> shapes;
  for (const ServerSpec& s : cluster.specs) {
    const size_t i = shapes.size();
    const int32_t type = i < options.server_gpu_types.size() ? options.server_gpu_types[i] : 0;
    shapes.push_back({s.gpus, s.cpus, s.memory_gb, type});
  }
  st.ledger = std::make_unique<scheduling::ClusterLedger>(std::move(shapes));
  st.policy = &scheduling::PolicyNamed(options.policy);
  st.mechanism_definition = &scheduling::MechanismNamed(options.mechanism);
  st.mechanism = st.mechanism_definition->make(options.mechanism_options);
  st.options = options;
  st.cluster = std::move(cluster);
  st.clock = clock;
  st.telemetry = telemetry;
  st.server_up.assign(st.cluster.servers.size(), true);
  st.server_back_at_s.assign(st.cluster.servers.size(), -1);
  st.order = scheduling::QueueOrder(*st.policy, options.order);
  st.starvation = scheduling::StarvationGuard(options.order.starvation_s);
  if (telemetry->network) telemetry->network->Register(self->id(), EndpointKind::kScheduler, 0);
  scheduler_detail::WatchServers(self);
  self->set_down_handler([=](caf::down_msg& down) { scheduler_detail::OnDown(self, down); });
  if (st.options.recover) {
    scheduler_detail::Recover(self);
  } else {
    Tell(self, telemetry, self, round_end_atom::value, kWakeUp, 0.0);  // the first round, at 0
  }
  return {
      // First: a round brings one report per lease, and CAF tries the handlers in this order.
      [=](JobProgress& progress) {
        if (scheduler_detail::FileForRoundEnd(self, progress)) return;
        scheduler_detail::OnProgress(self, progress);
      },
      AskLaterHandler(),  // the timer of Ask (requests to the workload, profiler, checkpoints)
      [=](round_end_atom, int64_t round, double at_s) {
        SchedulerState& st = self->state;
        if (st.ended) return;
        if (round == kWakeUp) return scheduler_detail::BeginRound(self, at_s);
        if (round != st.round) return;
        scheduler_detail::OnRoundTimer(self);
      },
      [=](grace_atom, int64_t round) { scheduler_detail::OnGrace(self, round); },
      [=](const FaultNotice& notice) { scheduler_detail::OnFaultNotice(self, notice); },
      [=](JobRespawned& respawned) { scheduler_detail::OnJobRespawned(self, respawned); },
      [=](const ServerNotice& notice) { scheduler_detail::OnServerNotice(self, notice); },
      [=](ServerUp& up) { scheduler_detail::OnServerUp(self, up); },
      [=](const LeaseRefusal& refusal) {
        ++self->state.lease_refusals;
        spdlog::error("scheduler: server {} refused job {} in round {}: {}", refusal.server,
                      refusal.job_id, refusal.round, refusal.reason);
      },
  };
}

}  // namespace troupe
