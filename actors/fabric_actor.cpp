#include "actors/fabric_actor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

using FabricSelf = caf::stateful_actor<FabricActorState>;
using FlowKey = std::pair<caf::actor_addr, int64_t>;

// A flow whose rest would take less than this is through: the timer lands within a nanosecond of
// the computed instant, on either side.
constexpr double kDoneWithinS = 1e-9;

double Now(FabricSelf* self) { return self->state.clock.Now(self); }

// Every flow's remaining bytes drained at its rate up to `now`.
void Drain(FabricActorState& st, double now) {
  const double elapsed = now - st.drained_to_s;
  st.drained_to_s = now;
  if (elapsed <= 0) return;
  for (auto& [key, flow] : st.flows) {
    flow.remaining_bytes -= st.sharing->Rate(flow.id) * elapsed;
  }
}

bool Through(const FabricActorState& st, const FabricFlow& flow) {
  const double rate = st.sharing->Rate(flow.id);
  return std::isinf(rate) || flow.remaining_bytes <= rate * kDoneWithinS;
}

// Answers the flows that are through, at now + their latency, and takes them off the links.
void Complete(FabricSelf* self, double now) {
  FabricActorState& st = self->state;
  std::vector<FlowKey> done;
  for (const auto& [key, flow] : st.flows) {
    if (Through(st, flow)) done.push_back(key);
  }
  for (const FlowKey& key : done) {
    const FabricFlow& flow = st.flows.at(key);
    const double at_s = now + flow.latency_s;
    TellAt(self, st.telemetry, st.clock, flow.sender, at_s,
           FlowDone{.key = flow.key, .seconds = at_s - flow.started_s});
    st.sharing->Remove(flow.id);
    st.flows.erase(key);
  }
  if (!done.empty()) st.sharing->Update();
}

// After a change: re-shares, answers what is through, and sets the one timer at the next
// completion at the new rates.
void Reshare(FabricSelf* self, double now) {
  FabricActorState& st = self->state;
  st.sharing->Update();
  Complete(self, now);
  double next_s = std::numeric_limits<double>::infinity();
  for (const auto& [key, flow] : st.flows) {
    next_s = std::min(next_s, flow.remaining_bytes / st.sharing->Rate(flow.id));
  }
  ++st.timer;
  if (std::isfinite(next_s)) {
    TellAt(self, st.telemetry, st.clock, self, now + next_s, fabric_tick_atom::value, st.timer);
  }
}

void Withdraw(FabricActorState& st, const FlowKey& key) {
  auto it = st.flows.find(key);
  if (it == st.flows.end()) return;
  st.sharing->Remove(it->second.id);
  st.flows.erase(it);
}

void Start(FabricSelf* self, const FlowStart& start) {
  FabricActorState& st = self->state;
  auto sender = caf::actor_cast<caf::actor>(self->current_sender());
  if (!sender) return;
  const double now = Now(self);
  const int32_t servers = st.topology.servers();
  if (start.from_server < 0 || start.from_server >= servers || start.to_server < 0 ||
      start.to_server >= servers) {
    Tell(self, st.telemetry, sender, FlowDone{.key = start.key, .seconds = 0});
    return;
  }
  Drain(st, now);
  const FlowKey key{sender.address(), start.key};
  Withdraw(st, key);
  st.route.clear();
  st.topology.Route(start.from_server, start.to_server, &st.route);
  st.flows[key] = FabricFlow{.id = st.sharing->Add(st.route),
                             .sender = std::move(sender),
                             .key = start.key,
                             .remaining_bytes = std::max(0.0, start.bytes),
                             .latency_s = st.topology.LatencyS(start.from_server, start.to_server),
                             .started_s = now};
  Reshare(self, now);
}

void Stop(FabricSelf* self, const FlowStop& stop) {
  FabricActorState& st = self->state;
  const FlowKey key{self->current_sender() ? self->current_sender()->address() : caf::actor_addr{},
                    stop.key};
  if (!st.flows.count(key)) return;
  const double now = Now(self);
  Drain(st, now);
  Withdraw(st, key);
  Reshare(self, now);
}

}  // namespace

caf::behavior FabricActor(FabricSelf* self, fabric::Topology topology, Telemetry* telemetry) {
  return FabricActorOnClock(self, std::move(topology), telemetry,
                            RunClock{.epoch = self->clock().now(), .time_scale = 1});
}

caf::behavior FabricActorOnClock(FabricSelf* self, fabric::Topology topology, Telemetry* telemetry,
                                 RunClock clock) {
  FabricActorState& st = self->state;
  st.sharing = std::make_unique<fabric::FlowSharing>(topology.Capacities());
  st.topology = std::move(topology);
  st.clock = clock;
  st.telemetry = telemetry;
  st.drained_to_s = Now(self);
  return {
      [=](const FlowStart& start) { Start(self, start); },
      [=](const FlowStop& stop) { Stop(self, stop); },
      [=](fabric_tick_atom, int64_t timer) {
        if (timer != self->state.timer) return;  // superseded by a later re-share
        const double now = Now(self);
        Drain(self->state, now);
        Reshare(self, now);
      },
  };
}

}  // namespace troupe
