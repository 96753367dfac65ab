// The scheduler's supervision (scheduler_actor.hpp, docs/faults.md): it monitors every server and
// job, and hands the engine each death, fault notice, respawn and restart.
#include <spdlog/spdlog.h>

#include <caf/exit_reason.hpp>
#include <utility>

#include "actors/scheduler_internal.hpp"

namespace troupe::scheduler_detail {
namespace {

// Before the engine cuts its leases: what the failure interrupts, and why it happened. A job hit by
// several servers at one instant (a switch takes its rack) is interrupted once: by the first.
void RecordServerDown(Self* self, int32_t server) {
  SchedulerState& st = self->state;
  const double now_s = st.clock.Now(self);
  const scheduling::ClusterScheduler::LeasesOnServer hit = st.engine->RunningOn(server, now_s);
  ServerDownRecord record{.at_s = now_s,
                          .server = server,
                          .gpus = hit.server_gpus,
                          .cause = "lost",
                          .restart_at_s = -1,
                          .jobs_hit = 0,
                          .job_gpus_hit = 0};
  if (st.jobs_hit_at_s != now_s) st.jobs_hit_now.clear();
  st.jobs_hit_at_s = now_s;
  for (const auto& job : hit.jobs) {
    if (!st.jobs_hit_now.insert(job.id).second) continue;
    ++record.jobs_hit;
    record.job_gpus_hit += job.gpus;
  }
  if (auto it = st.server_notices.find(server); it != st.server_notices.end()) {
    // A notice without a cause re-announces, to a restarted scheduler, a crash recorded before.
    const ServerNotice notice = std::move(it->second);
    st.server_notices.erase(it);
    if (notice.cause.empty()) return;
    record.cause = notice.cause;
    record.restart_at_s = notice.restart_at_s;
  }
  Tell(self, st.telemetry, st.cluster.metrics, std::move(record));
}

}  // namespace

scheduling::ResumePoint ResumePointOf(const JobCheckpoint& c) {
  return scheduling::ResumePoint{c.job_id,        c.iterations_left, c.at_s,        c.finished,
                                 c.first_start_s, c.rounds_run,      c.gpu_seconds, c.wasted_gpu_s,
                                 c.restarts,      c.recovery};
}

// A respawned job under faults.recovery resumes from its last checkpoint, not its last lease.
scheduling::ResumePoint RespawnPointOf(const JobCheckpoint& c) {
  scheduling::ResumePoint point = ResumePointOf(c);
  if (c.cadence.saved_iterations_left >= 0) point.iterations_left = c.cadence.saved_iterations_left;
  return point;
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
  if (st.engine->ended()) return;
  const caf::actor_addr& id = down.source;
  if (auto s = st.server_of_actor.find(id); s != st.server_of_actor.end()) {
    const int32_t server = s->second;
    st.server_of_actor.erase(s);
    spdlog::warn("scheduler: server {} is down ({}) at {:.0f} s", server,
                 self->system().render(down.reason), st.clock.Now(self));
    RecordServerDown(self, server);
    return st.engine->ServerDown(server, st.clock.Now(self));
  }
  auto j = st.job_of_actor.find(id);
  if (j == st.job_of_actor.end()) return;
  const int64_t job_id = j->second;
  st.job_of_actor.erase(j);
  st.job_actors.erase(job_id);
  st.engine->JobDown(job_id, st.clock.Now(self), self->system().render(down.reason));
}

void OnFaultNotice(Self* self, const FaultNotice& notice) {
  self->state.engine->FaultNotice(notice.job_id, notice.restart_at_s, notice.fault);
}

void OnJobRespawned(Self* self, JobRespawned& respawned) {
  using Respawn = scheduling::ClusterScheduler::Respawn;
  const Respawn fate =
      self->state.engine->JobRespawned(respawned.job_id, RespawnPointOf(respawned.checkpoint));
  if (fate == Respawn::kResumed) {
    WatchJob(self, respawned.job_id, std::move(respawned.handle));
  } else if (fate == Respawn::kRejected && respawned.handle) {
    self->send_exit(respawned.handle, caf::exit_reason::user_shutdown);
  }
}

void OnServerNotice(Self* self, const ServerNotice& notice) {
  self->state.server_notices[notice.server] = notice;
  self->state.engine->ServerNotice(notice.server, notice.restart_at_s);
}

void OnServerUp(Self* self, ServerUp& up) {
  SchedulerState& st = self->state;
  if (up.server < 0 || static_cast<size_t>(up.server) >= st.cluster.servers.size()) return;
  // The handle it replaces is no longer the server: its down message, late or not, means nothing.
  server_actor& slot = st.cluster.servers[up.server];
  st.server_of_actor.erase(slot.address());
  self->demonitor(slot.address());
  slot = std::move(up.handle);
  st.engine->ServerUp(up.server);
  self->monitor(slot);
  st.server_of_actor[slot.address()] = up.server;
  spdlog::info("scheduler: server {} is back at {:.0f} s", up.server, st.clock.Now(self));
  // Its repair took until now, whatever the notices said (a second crash may have put it off).
  st.server_notices.erase(up.server);
  Tell(self, st.telemetry, st.cluster.metrics,
       ServerBackRecord{.server = up.server, .at_s = st.clock.Now(self)});
}

}  // namespace troupe::scheduler_detail
