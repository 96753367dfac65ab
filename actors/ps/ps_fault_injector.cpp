#include "actors/ps/ps_fault_injector.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <filesystem>

#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

using PsInjectorSelf = caf::stateful_actor<PsFaultInjectorState>;

std::string NodeName(int32_t node) { return "ps:" + std::to_string(node); }

void Record(PsInjectorSelf* self, int32_t node, const FaultEvent& e, const std::string& event,
            int64_t count, std::string detail) {
  PsFaultInjectorState& st = self->state;
  Tell(self, st.setup.telemetry, st.setup.collector,
       PsFaultRecord{st.setup.clock.Now(self), node, FaultKindName(e.kind), event, -1, count,
                     std::move(detail)});
}

void Crash(PsInjectorSelf* self, const FaultEvent& e, int32_t node) {
  PsFaultInjectorState& st = self->state;
  if (st.down[node]) return;  // already down: overlapping crashes are one
  st.down[node] = true;
  st.gone[node] = false;
  self->monitor(st.setup.shards[node]);  // the restart waits for its down message
  caf::anon_send_exit(st.setup.shards[node], caf::exit_reason::kill);
  Record(self, node, e, "crashed", 0, e.Describe());
  if (e.duration_s > 0) return;
  Tell(self, st.setup.telemetry, st.setup.collector,
       PsFailure{NodeName(node) + " crashed at " + std::to_string(e.at_s) +
                 " s and does not restart (duration_s 0): its shard of the parameters is lost "
                 "to the run"});
}

void Restart(PsInjectorSelf* self, const FaultEvent& e, int32_t node) {
  PsFaultInjectorState& st = self->state;
  const PsOptions& o = st.setup.options;
  const std::string dir =
      (std::filesystem::path(o.ssd_dir) / ("node-" + std::to_string(node))).string();
  std::unique_ptr<ShardCore> core;
  if (auto s = ShardCore::Open(o, node, dir, &core); !s.ok()) {
    // A folder holding another shard's or run's store is the user's doing: bad input (exit 2).
    const std::string field =
        s.code() == Status::Code::kInvalidInput ? "paramserver.ssd_dir: " : "";
    Tell(self, st.setup.telemetry, st.setup.collector,
         PsFailure{field + NodeName(node) + " cannot recover its SSD-PS: " + s.message()});
    return;
  }
  const int64_t recovered = core->recovered_step();
  const double now = st.setup.clock.Now(self);
  const double recovery_s = static_cast<double>(core->recovery_bytes()) / o.rates.ssd_bytes_per_s;
  ShardSetup setup;
  setup.shard = node;
  setup.options = o;
  setup.collector = st.setup.collector;
  setup.clock = st.setup.clock;
  setup.telemetry = st.setup.telemetry;
  setup.faults = PsNodeFaultsOf(st.setup.plan, node, o.nodes);
  setup.incarnation = ++st.incarnation[node];
  setup.recovered_step = recovered;
  setup.ssd_free_s = now + recovery_s;
  Record(self, node, e, "restarted", static_cast<int64_t>(core->ssd().size()),
         NodeName(node) + " recovered " + std::to_string(core->ssd().size()) +
             " keys from SSD-PS, every update up to step " + std::to_string(recovered) + " (" +
             std::to_string(core->recovery_bytes()) + " bytes read)");
  setup.core = std::move(core);
  caf::actor shard = self->system().spawn(ShardActor, std::move(setup));
  st.setup.shards[node] = shard;
  st.down[node] = false;
  const PsShardRestarted restarted{node, shard, st.incarnation[node], recovered};
  for (const caf::actor& a : st.setup.partitioners) Tell(self, st.setup.telemetry, a, restarted);
  for (const caf::actor& a : st.setup.trainers) Tell(self, st.setup.telemetry, a, restarted);
  Tell(self, st.setup.telemetry, shard, PsStart{0});
}

// Brings node m back once its restart is due and its killed incarnation has terminated: until
// then that incarnation may still be in a handler, writing the SSD-PS folder recovery reads.
void MaybeRestart(PsInjectorSelf* self, int32_t node) {
  PsFaultInjectorState& st = self->state;
  if (!st.down[node] || !st.gone[node] || st.restart[node] < 0) return;
  const FaultEvent& e = st.setup.plan.events[st.restart[node]];
  st.restart[node] = -1;
  Restart(self, e, node);
}

void OnDown(PsInjectorSelf* self, const caf::down_msg& down) {
  PsFaultInjectorState& st = self->state;
  for (size_t m = 0; m < st.setup.shards.size(); ++m) {
    if (!st.down[m] || st.setup.shards[m].address() != down.source) continue;
    st.gone[m] = true;
    MaybeRestart(self, static_cast<int32_t>(m));
  }
}

void OnTimer(PsInjectorSelf* self, const PsFaultTimer& t) {
  PsFaultInjectorState& st = self->state;
  const FaultEvent& e = st.setup.plan.events[t.index];
  switch (e.kind) {
    case FaultKind::kCrash:
      if (!t.end) return Crash(self, e, t.node);
      if (!st.down[t.node]) return;  // up: this crash overlapped one whose restart came first
      st.restart[t.node] = t.index;
      return MaybeRestart(self, t.node);
    case FaultKind::kSlow:
    case FaultKind::kDisk:
      return Record(self, t.node, e, t.end ? "ended" : "began", 0, e.Describe());
    default:
      return;
  }
}

}  // namespace

caf::behavior PsFaultInjectorActor(caf::stateful_actor<PsFaultInjectorState>* self,
                                   PsFaultInjectorSetup setup) {
  PsFaultInjectorState& st = self->state;
  st.setup = std::move(setup);
  const int32_t nodes = st.setup.options.nodes;
  st.incarnation.assign(static_cast<size_t>(nodes), 0);
  st.down.assign(static_cast<size_t>(nodes), false);
  st.gone.assign(static_cast<size_t>(nodes), false);
  st.restart.assign(static_cast<size_t>(nodes), -1);
  self->set_down_handler([=](caf::down_msg& down) { OnDown(self, down); });
  const auto me = caf::actor_cast<caf::actor>(self);
  for (size_t i = 0; i < st.setup.plan.events.size(); ++i) {
    const FaultEvent& e = st.setup.plan.events[i];
    if (e.kind != FaultKind::kCrash && e.kind != FaultKind::kSlow && e.kind != FaultKind::kDisk) {
      continue;
    }
    for (const int32_t node : PsNodesOf(e, nodes)) {
      const auto index = static_cast<int32_t>(i);
      TellAt(self, st.setup.telemetry, st.setup.clock, me, e.at_s, PsFaultTimer{index, node});
      if (e.duration_s > 0) {
        TellAt(self, st.setup.telemetry, st.setup.clock, me, e.at_s + e.duration_s,
               PsFaultTimer{index, node, true});
      }
    }
  }
  return {[=](const PsFaultTimer& t) { OnTimer(self, t); }};
}

}  // namespace troupe
