#include "actors/scheduler_actor.hpp"

#include <spdlog/spdlog.h>

#include <caf/event_based_actor.hpp>
#include <utility>

#include "actors/scheduler_internal.hpp"
#include "messages/atoms.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/fault_network.hpp"

namespace troupe {
namespace scheduler_detail {

using RoundStart = scheduling::ClusterScheduler::RoundStart;

void BeginRound(Self* self, double start_s) {
  SchedulerState& st = self->state;
  if (st.engine->BeginRound(start_s) != RoundStart::kPullArrivals) return;
  Ask(
      self, st.telemetry, st.cluster.workload, ArrivalsRequest{start_s},
      [=](ArrivalBatch& batch) {
        SchedulerState& st = self->state;
        std::vector<scheduling::Arrival> arrivals = TakeArrivals(self, batch.jobs);
        std::vector<ProfileAsk> asks = st.engine->Admit(arrivals, batch.next_arrival_s);
        if (asks.empty()) return st.engine->PlanRound(start_s);
        Ask(
            self, st.telemetry, st.cluster.profiler, ProfileRequest{std::move(asks)},
            [=](ProfileBatch& profiles) {
              self->state.engine->ApplyProfiles(profiles);
              self->state.engine->PlanRound(start_s);
            },
            [=] { Unreachable(self, "the profiler"); }, RetryEveryRound(st));
      },
      [=] { Unreachable(self, "the workload"); }, RetryEveryRound(st));
}

void Unreachable(Self* self, const std::string& who) {
  self->state.engine->EndRun(who +
                             " is unreachable (every request dropped; a partition that never "
                             "heals?)");
}

AskRetry RetryEveryRound(const SchedulerState& st) { return AskRetry{st.round_s, 1000}; }

}  // namespace scheduler_detail

using scheduler_detail::kWakeUp;
using scheduler_detail::Self;

namespace {

// The engine's view of the cluster: each server's shape and GPU type, and the actors around it.
scheduling::ClusterSetup SetupOf(const SchedulerOptions& options, const ClusterHandles& cluster,
                                 const Telemetry* telemetry) {
  scheduling::ClusterSetup setup;
  for (const ServerSpec& s : cluster.specs) {
    const size_t i = setup.servers.size();
    const int32_t type = i < options.server_gpu_types.size() ? options.server_gpu_types[i] : 0;
    setup.servers.push_back({s.gpus, s.cpus, s.memory_gb, type});
  }
  setup.profiler = static_cast<bool>(cluster.profiler);
  setup.keeps_failures = static_cast<bool>(cluster.injector);
  setup.every_server_hears = telemetry->live != nullptr;
  return setup;
}

}  // namespace

scheduler_actor_impl::behavior_type SchedulerActor(Self* self, SchedulerOptions options,
                                                   ClusterHandles cluster, RunClock clock,
                                                   Telemetry* telemetry) {
  SchedulerState& st = self->state;
  st.messenger = scheduler_detail::MakeMessenger(self);
  st.engine = std::make_unique<scheduling::ClusterScheduler>(
      options, SetupOf(options, cluster, telemetry), st.messenger.get());
  st.round_s = options.round_s;
  st.cluster = std::move(cluster);
  st.clock = clock;
  st.telemetry = telemetry;
  if (telemetry->network) telemetry->network->Register(self->id(), EndpointKind::kScheduler, 0);
  scheduler_detail::WatchServers(self);
  self->set_down_handler([=](caf::down_msg& down) { scheduler_detail::OnDown(self, down); });
  if (options.recover) {
    scheduler_detail::Recover(self);
  } else {
    Tell(self, telemetry, self, round_end_atom::value, kWakeUp, 0.0);  // the first round, at 0
  }
  return {
      // First: a round brings one report per lease, and CAF tries the handlers in this order.
      [=](JobProgress& progress) {
        scheduling::ClusterScheduler& engine = *self->state.engine;
        if (engine.FileForRoundEnd(progress)) return;
        engine.OnProgress(progress);
      },
      AskLaterHandler(),  // the timer of Ask (requests to the workload, profiler, checkpoints)
      [=](round_end_atom, int64_t round, double at_s) {
        scheduling::ClusterScheduler& engine = *self->state.engine;
        if (engine.ended()) return;
        if (round == kWakeUp) return scheduler_detail::BeginRound(self, at_s);
        if (round == scheduler_detail::kPlanDeferred) return engine.PlanRound(at_s);
        if (round != engine.round()) return;
        engine.OnRoundTimer();
      },
      [=](grace_atom, int64_t round) { self->state.engine->OnGrace(round); },
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
