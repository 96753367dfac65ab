#include "actors/fault_injector_actor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/actor_cast.hpp>
#include <caf/exit_reason.hpp>
#include <cmath>
#include <limits>

#include "actors/server_actor.hpp"
#include "messages/atoms.hpp"
#include "messages/fault_messages.hpp"
#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

using InjectorSelf = caf::stateful_actor<FaultInjectorState>;

void Record(InjectorSelf* self, const FaultEvent& e, std::string effect, double recovered_s) {
  FaultInjectorState& st = self->state;
  spdlog::info("fault at {:.0f} s: {} ({})", e.at_s, e.Describe(), effect);
  Tell(self, st.telemetry, st.setup.cluster.metrics,
       FaultRecord{.at_s = e.at_s,
                   .fault = e.Describe(),
                   .effect = std::move(effect),
                   .recovered_s = recovered_s});
}

double RestartAt(const FaultEvent& e) { return e.duration_s > 0 ? e.EndS() : -1; }

constexpr double kUp = -1;
constexpr double kNever = std::numeric_limits<double>::infinity();

// Until when a crash keeps its target down.
double DownUntil(const FaultEvent& e) { return e.duration_s > 0 ? e.EndS() : kNever; }

// As FaultNotice and ServerNotice say it: -1 for never.
double AsRestart(double down_until) { return down_until == kNever ? -1 : down_until; }

std::string BackAt(double down_until) {
  return down_until == kNever ? "it never restarts" : fmt::format("back at {:.0f} s", down_until);
}

bool SchedulerIsDown(const FaultInjectorState& st) { return st.scheduler_down_until != kUp; }

// A server that fails while the scheduler is down: no scheduler records it (nor sees it, if it
// is back before the scheduler), so the injector does, from its failure, with its cause. No
// lease was cut: the leases the old scheduler gave run to their end.
void RecordDownWithoutScheduler(InjectorSelf* self, const FaultEvent& e, int64_t server,
                                double until) {
  FaultInjectorState& st = self->state;
  Tell(self, st.telemetry, st.setup.cluster.metrics,
       ServerDownRecord{.at_s = e.at_s,
                        .server = static_cast<int32_t>(server),
                        .gpus = st.setup.cluster.specs[server].gpus,
                        .cause = e.cause.empty() ? "fault" : e.cause,
                        .restart_at_s = AsRestart(until),
                        .jobs_hit = 0,
                        .job_gpus_hit = 0});
}

void CrashServers(InjectorSelf* self, const FaultEvent& e) {
  FaultInjectorState& st = self->state;
  for (int64_t s : e.target.IndicesAmong(static_cast<int64_t>(st.setup.cluster.servers.size()))) {
    double& down = st.server_down_until[s];
    const double until = std::max(down, DownUntil(e));
    const bool already_down = down != kUp;
    const bool changed = until != down;
    down = until;
    // The notice goes first, so the scheduler knows whether the server comes back when its down
    // message arrives.
    if (changed) {
      Tell(self, st.telemetry, st.scheduler,
           ServerNotice{.server = static_cast<int32_t>(s),
                        .restart_at_s = AsRestart(until),
                        .fault = e.Describe(),
                        .cause = e.cause.empty() ? "fault" : e.cause});
    }
    if (already_down) {
      // One recovery, recorded by the crash that took it down.
      Record(self, e, fmt::format("server {} was down already; {}", s, BackAt(until)), -1);
      continue;
    }
    self->send_exit(st.setup.cluster.servers[s], caf::exit_reason::kill);
    if (SchedulerIsDown(st)) {
      RecordDownWithoutScheduler(self, e, s, until);
    } else {
      if (!st.killed_now.empty() && st.killed_now.front().fault.at_s != e.at_s) {
        st.killed_now.clear();
      }
      st.killed_now.push_back(ServerKill{.fault = e, .server = s, .down_until = until});
    }
    Record(self, e, fmt::format("killed server {}", s), RestartAt(e));
  }
}

void RestartServers(InjectorSelf* self, const FaultEvent& e) {
  FaultInjectorState& st = self->state;
  ClusterHandles& cluster = st.setup.cluster;
  for (int64_t s : e.target.IndicesAmong(static_cast<int64_t>(cluster.servers.size()))) {
    // A later crash of the same server moved its restart: that crash's end restarts it.
    if (st.server_down_until[s] != e.EndS()) continue;
    st.server_down_until[s] = kUp;
    if (!st.setup.server_is_local[s]) {
      spdlog::warn("fault: server {} lived on another node; it restarts in this process", s);
    }
    cluster.servers[s] = self->spawn(ServerActor, cluster.specs[s], st.telemetry);
    Tell(self, st.telemetry, st.scheduler,
         ServerUp{.server = static_cast<int32_t>(s), .handle = cluster.servers[s]});
    if (SchedulerIsDown(st)) {  // no scheduler to record its return
      Tell(self, st.telemetry, cluster.metrics,
           ServerBackRecord{.server = static_cast<int32_t>(s), .at_s = e.EndS()});
    }
  }
}

// The workload's jobs that `target` names: sized by the jobs there are, not by their largest id
// (a trace's ids may reach 10^12). Without ids: 0 .. jobs - 1, or ids < 100 when that is unknown.
std::vector<int64_t> JobsHit(const FaultInjectorState& st, const ActorSet& target) {
  const std::vector<int64_t>& ids = st.setup.job_ids;
  if (ids.empty()) return target.IndicesAmong(st.setup.jobs > 0 ? st.setup.jobs : 100);
  const auto from = std::lower_bound(ids.begin(), ids.end(), target.first);
  const auto to = target.last < 0 ? ids.end() : std::upper_bound(from, ids.end(), target.last);
  return std::vector<int64_t>(from, to);
}

// What a job crash did, for faults.csv: a job has an actor only from its first placement until
// it ends, so a crash may find none to kill.
std::string JobCrashEffect(size_t hit, const std::vector<int64_t>& killed) {
  constexpr char kWhyNone[] = "not placed yet, or ended";
  if (hit == 1) {
    return killed.empty() ? fmt::format("nothing to kill: the job had no actor ({})", kWhyNone)
                          : "killed the job's actor";
  }
  if (killed.size() == hit) return fmt::format("killed the actors of its {} jobs", hit);
  if (killed.empty()) {
    return fmt::format("nothing to kill: none of its {} jobs had an actor ({})", hit, kWhyNone);
  }
  constexpr size_t kNamed = 5;
  const std::vector<int64_t> named(killed.begin(),
                                   killed.begin() + std::min(kNamed, killed.size()));
  return fmt::format("killed the actors of {} of its {} jobs ({}{}); the others had none ({})",
                     killed.size(), hit, fmt::join(named, ", "),
                     killed.size() > kNamed ? ", ..." : "", kWhyNone);
}

void CrashJobs(InjectorSelf* self, const FaultEvent& e) {
  FaultInjectorState& st = self->state;
  CrashJob crash{.job_ids = JobsHit(st, e.target), .restarts = e.duration_s > 0};
  // The notices go first, so the scheduler knows whether to wait for a job when its down
  // message arrives.
  for (int64_t id : crash.job_ids) {
    Tell(self, st.telemetry, st.scheduler,
         FaultNotice{.job_id = id, .restart_at_s = RestartAt(e), .fault = e.Describe()});
  }
  const size_t hit = crash.job_ids.size();
  Ask(
      self, st.telemetry, st.setup.cluster.workload, std::move(crash),
      [=](const JobsCrashed& crashed) {
        Record(self, e, JobCrashEffect(hit, crashed.killed),
               crashed.killed.empty() ? -1 : RestartAt(e));
      },
      [] {});  // the injector is no endpoint of the fault network: its requests always arrive
}

void RestartJobs(InjectorSelf* self, const FaultEvent& e) {
  FaultInjectorState& st = self->state;
  for (int64_t id : JobsHit(st, e.target)) {
    Tell(self, st.telemetry, st.setup.cluster.workload, RespawnJob{.job_id = id});
  }
}

void CrashScheduler(InjectorSelf* self, const FaultEvent& e) {
  FaultInjectorState& st = self->state;
  if (st.scheduler_down_until != kUp) {
    // Killing it again would kill nothing, and two restarts would make two schedulers.
    st.scheduler_down_until = std::max(st.scheduler_down_until, DownUntil(e));
    return Record(
        self, e, fmt::format("the scheduler was down already; {}", BackAt(st.scheduler_down_until)),
        -1);
  }
  st.scheduler_down_until = DownUntil(e);
  self->send_exit(st.scheduler, caf::exit_reason::kill);
  Record(self, e, "killed the scheduler", RestartAt(e));
  // Servers killed at this instant: the scheduler's own kill reaches it before their deaths do.
  for (const ServerKill& kill : st.killed_now) {
    if (kill.fault.at_s == e.at_s)
      RecordDownWithoutScheduler(self, kill.fault, kill.server, kill.down_until);
  }
  st.killed_now.clear();
}

void RestartScheduler(InjectorSelf* self, const FaultEvent& e) {
  FaultInjectorState& st = self->state;
  if (st.scheduler_down_until != e.EndS()) return;  // a later crash moved its restart
  st.scheduler_down_until = kUp;
  SchedulerOptions options = st.setup.scheduler_options;
  options.recover = true;
  ClusterHandles cluster = st.setup.cluster;
  cluster.injector = caf::actor_cast<caf::actor>(self);
  st.scheduler = caf::actor_cast<scheduler_actor>(
      self->spawn(SchedulerActor, options, cluster, st.clock, st.telemetry));
  // It finds the dead servers by their down messages; which of them come back, only we know.
  for (size_t s = 0; s < st.server_down_until.size(); ++s) {
    if (st.server_down_until[s] == kUp) continue;
    Tell(self, st.telemetry, st.scheduler,
         ServerNotice{.server = static_cast<int32_t>(s),
                      .restart_at_s = AsRestart(st.server_down_until[s]),
                      .fault = "down when the scheduler restarted",
                      .cause = ""});
  }
}

void Begin(InjectorSelf* self, const FaultEvent& e) {
  FaultInjectorState& st = self->state;
  switch (e.kind) {
    case FaultKind::kCrash:
      if (e.target.kind == EndpointKind::kServer) return CrashServers(self, e);
      if (e.target.kind == EndpointKind::kJob) return CrashJobs(self, e);
      if (e.target.kind == EndpointKind::kScheduler) return CrashScheduler(self, e);
      if (e.target.kind == EndpointKind::kNode) {
        auto node = st.setup.nodes.find(e.target.node);
        if (node == st.setup.nodes.end()) return Record(self, e, "no such node in this run", -1);
        Tell(self, st.telemetry, node->second, crash_atom::value);
        return Record(self, e, "the node process exits at once", -1);
      }
      return Record(self, e, "not a target of a cluster run", -1);
    case FaultKind::kSlow: {
      const SlowDown slow{e.factor, e.EndS()};
      for (int64_t s :
           e.target.IndicesAmong(static_cast<int64_t>(st.setup.cluster.servers.size()))) {
        Tell(self, st.telemetry, st.setup.cluster.servers[s], slow);
      }
      return Record(self, e, "leases from now run at the factor", -1);
    }
    default:
      return Record(self, e, "applied by the network to every message", -1);
  }
}

void End(InjectorSelf* self, const FaultEvent& e) {
  if (e.kind != FaultKind::kCrash) return;
  if (e.target.kind == EndpointKind::kServer) return RestartServers(self, e);
  if (e.target.kind == EndpointKind::kJob) return RestartJobs(self, e);
  if (e.target.kind == EndpointKind::kScheduler) return RestartScheduler(self, e);
}

}  // namespace

caf::behavior FaultInjectorActor(InjectorSelf* self, FaultInjectorSetup setup, RunClock clock,
                                 Telemetry* telemetry) {
  FaultInjectorState& st = self->state;
  st.setup = std::move(setup);
  st.clock = clock;
  st.telemetry = telemetry;
  st.server_down_until.assign(st.setup.cluster.servers.size(), kUp);
  const std::vector<FaultEvent>& events = st.setup.plan.events;
  for (size_t i = 0; i < events.size(); ++i) {
    const int64_t index = static_cast<int64_t>(i);
    TellAt(self, telemetry, clock, self, events[i].at_s, fault_atom::value, index, true);
    if (events[i].kind == FaultKind::kCrash && events[i].duration_s > 0) {
      TellAt(self, telemetry, clock, self, events[i].EndS(), fault_atom::value, index, false);
    }
  }
  return {
      [=](caf::put_atom, caf::actor scheduler) {
        self->state.scheduler = caf::actor_cast<scheduler_actor>(std::move(scheduler));
      },
      [=](fault_atom, int64_t index, bool begin) {
        const FaultEvent& e = self->state.setup.plan.events[index];
        if (begin) {
          Begin(self, e);
        } else {
          End(self, e);
        }
      },
  };
}

}  // namespace troupe
