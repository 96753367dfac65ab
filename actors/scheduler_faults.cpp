// The scheduler's supervision and recovery (scheduler_actor.hpp, docs/faults.md).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/exit_reason.hpp>
#include <cmath>

#include "actors/scheduler_internal.hpp"
#include "messages/atoms.hpp"
#include "runtime/counted_send.hpp"

namespace troupe::scheduler_detail {
namespace {

double Now(Self* self) { return self->state.clock.Seconds(self->clock().now()); }

bool InFlight(const SchedulerState& st) { return st.round >= 0 && !st.round_timer_fired; }

bool AwaitedThisRound(const SchedulerState& st, const TrackedJob& job) {
  return st.round >= 0 && job.reported_round != st.round &&
         std::find(st.round_jobs.begin(), st.round_jobs.end(), job.record.job_id) !=
             st.round_jobs.end();
}

void OnServerDown(Self* self, int32_t server, const caf::error& reason) {
  SchedulerState& st = self->state;
  st.server_up[server] = false;
  spdlog::warn("scheduler: server {} is down ({}) at {:.0f} s", server,
               self->system().render(reason), Now(self));
  // Its leases end now; a gang job loses every part (the job reports at once). After the round's
  // timer, the jobs still awaited on it may be waiting for a grant it never sent: they report too.
  for (const scheduling::JobPlacement& placement : st.round_placements) {
    const auto& parts = placement.parts;
    const auto on_server = [server](const scheduling::PlacementPart& p) {
      return p.server == server;
    };
    if (std::none_of(parts.begin(), parts.end(), on_server)) continue;
    auto it = st.jobs.find(placement.job_id);
    if (it == st.jobs.end() || it->second.done || !it->second.handle) continue;
    if (!AwaitedThisRound(st, it->second)) continue;
    Tell(self, st.telemetry, it->second.handle, LeaseLost{st.round, st.current.start_s, server});
  }
}

void OnJobDown(Self* self, TrackedJob& job, const caf::error& reason) {
  SchedulerState& st = self->state;
  job.handle = caf::actor{};
  if (job.done) return;
  job.down = true;
  Touch(st, job.record.job_id);
  const double now_s = Now(self);
  if (AwaitedThisRound(st, job)) {
    // The lease dies with the job: its work since the lease start was never checkpointed. Lost
    // is what it held of the lease, as a job counts a lease it loses (JobActor): on the wall
    // clock the round's timer may fire late on a loaded machine, and a death taken before it
    // can come after the lease's end, but the lease ended there.
    if (InFlight(st)) {
      job.record.wasted_gpu_s += job.view.gpus * std::clamp(now_s - st.current.start_s, 0.0,
                                                            st.current.end_s - st.current.start_s);
    }
    job.reported_round = static_cast<int32_t>(st.round);
    --st.awaiting_reports;
  }
  if (job.restart_at_s >= 0) {
    spdlog::info("scheduler: job {} down at {:.0f} s, restarts at {:.0f} s", job.record.job_id,
                 now_s, job.restart_at_s);
  } else {
    const std::string cause =
        job.crash_fault.empty() ? self->system().render(reason) : job.crash_fault;
    RecordFailed(self, job, fmt::format("actor died at {:.0f} s: {}", now_s, cause));
  }
  MaybeCloseRound(self);
}

}  // namespace

void WatchJob(Self* self, TrackedJob& job) {
  if (!job.handle) return;
  self->monitor(job.handle);
  self->state.job_of_actor[job.handle.address()] = job.record.job_id;
}

void WatchServers(Self* self) {
  SchedulerState& st = self->state;
  for (size_t s = 0; s < st.cluster.servers.size(); ++s) {
    self->monitor(st.cluster.servers[s]);
    st.server_of_actor[st.cluster.servers[s].address()] = static_cast<int32_t>(s);
  }
}

void OnDown(Self* self, const caf::down_msg& down) {
  SchedulerState& st = self->state;
  if (st.ended) return;
  const caf::actor_addr& id = down.source;
  if (auto s = st.server_of_actor.find(id); s != st.server_of_actor.end()) {
    const int32_t server = s->second;
    st.server_of_actor.erase(s);
    return OnServerDown(self, server, down.reason);
  }
  auto j = st.job_of_actor.find(id);
  if (j == st.job_of_actor.end()) return;
  const int64_t job_id = j->second;
  st.job_of_actor.erase(j);
  auto it = st.jobs.find(job_id);
  if (it != st.jobs.end()) OnJobDown(self, it->second, down.reason);
}

void OnFaultNotice(Self* self, const FaultNotice& notice) {
  auto it = self->state.jobs.find(notice.job_id);
  if (it == self->state.jobs.end() || it->second.done) return;
  TrackedJob& job = it->second;
  job.restart_at_s = notice.restart_at_s;
  if (!job.down) {
    job.crash_fault = notice.fault;
    return;
  }
  // Down already, and now known not to come back.
  if (notice.restart_at_s < 0) {
    RecordFailed(self, job, fmt::format("{} ({})", job.crash_fault, notice.fault));
    MaybeCloseRound(self);
  }
}

void OnJobRespawned(Self* self, JobRespawned& respawned) {
  SchedulerState& st = self->state;
  auto it = st.jobs.find(respawned.job_id);
  if (it == st.jobs.end() || it->second.done || !it->second.down) {
    if (respawned.handle) self->send_exit(respawned.handle, caf::exit_reason::user_shutdown);
    return;
  }
  TrackedJob& job = it->second;
  const JobCheckpoint& from = respawned.checkpoint;
  job.record.restarts = from.restarts;
  if (from.finished) {
    // It finished before it died, and its last report was lost: the checkpoint says when.
    job.down = false;
    return RecordFinished(self, job, from.at_s);
  }
  job.handle = std::move(respawned.handle);
  job.down = false;
  job.restart_at_s = -1;
  if (from.iterations_left >= 0) job.view.iterations_left = from.iterations_left;
  Touch(st, respawned.job_id);
  WatchJob(self, job);
}

void OnServerNotice(Self* self, const ServerNotice& notice) {
  SchedulerState& st = self->state;
  if (notice.server < 0 || static_cast<size_t>(notice.server) >= st.server_back_at_s.size()) return;
  st.server_back_at_s[notice.server] = notice.restart_at_s;
}

void OnServerUp(Self* self, ServerUp& up) {
  SchedulerState& st = self->state;
  if (up.server < 0 || static_cast<size_t>(up.server) >= st.cluster.servers.size()) return;
  // The handle it replaces is no longer the server: its down message, late or not, means nothing.
  caf::actor& slot = st.cluster.servers[up.server];
  st.server_of_actor.erase(slot.address());
  self->demonitor(slot);
  slot = std::move(up.handle);
  st.server_up[up.server] = true;
  st.server_back_at_s[up.server] = -1;
  self->monitor(slot);
  st.server_of_actor[slot.address()] = up.server;
  spdlog::info("scheduler: server {} is back at {:.0f} s", up.server, Now(self));
}

void FailJobsThatNoLongerFit(Self* self) {
  SchedulerState& st = self->state;
  scheduling::SurvivingGpus surviving;
  surviving.of_type.assign(st.ledger->type_count(), 0);
  surviving.servers = static_cast<int32_t>(st.server_up.size());
  for (size_t s = 0; s < st.server_up.size(); ++s) {
    if (!st.server_up[s] && st.server_back_at_s[s] < 0) {
      ++surviving.servers_lost;
    } else {
      surviving.of_type[st.ledger->shape(static_cast<int32_t>(s)).gpu_type] +=
          st.cluster.specs[s].gpus;
      surviving.total += st.cluster.specs[s].gpus;
    }
  }
  // Only the new arrivals, unless what survives changed since the queue was last asked.
  std::vector<int64_t> arrivals = std::move(st.unchecked_arrivals);
  st.unchecked_arrivals.clear();
  const bool whole_queue = surviving != st.fit_checked;
  if (whole_queue) st.fit_checked = surviving;
  bool failed = false;
  for (int64_t id : whole_queue ? st.queue : arrivals) {
    auto it = st.jobs.find(id);
    if (it == st.jobs.end()) continue;  // erased already
    TrackedJob& job = it->second;
    if (job.done) continue;
    const std::string why = st.mechanism->WhyNeverPlaced(job.view.gpus, surviving);
    if (why.empty()) continue;
    RecordFailed(
        self, job,
        fmt::format("needs {} GPU{}; {}", job.view.gpus, job.view.gpus == 1 ? "" : "s", why));
    failed = true;
  }
  // A run that lost nothing for good and fails nothing: not a single change.
  if (failed || surviving.servers_lost > 0) EraseDoneJobs(st);
}

void ArmGrace(Self* self) {
  SchedulerState& st = self->state;
  if (st.options.report_grace_s <= 0 || st.grace_pending) return;
  st.grace_pending = true;
  TellAt(self, st.telemetry, st.clock, self, Now(self) + st.options.report_grace_s,
         grace_atom::value, st.round);
}

void OnGrace(Self* self, int64_t round) {
  SchedulerState& st = self->state;
  if (st.ended || round != st.round) return;
  st.grace_pending = false;
  if (st.awaiting_reports <= 0) return;
  for (int64_t id : st.round_jobs) {
    auto it = st.jobs.find(id);
    if (it == st.jobs.end() || !it->second.handle || !AwaitedThisRound(st, it->second)) continue;
    Tell(self, st.telemetry, it->second.handle, ProgressQuery{st.round, st.current.start_s});
  }
  ArmGrace(self);
}

}  // namespace troupe::scheduler_detail
