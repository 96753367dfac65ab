// The fault injector of a parameter-server run (docs/paramserver.md, "Faults"): plays the run's
// FaultPlan events that hit PS nodes on the run's clock.
//
//   crash ps:m @t +d  at t it kills shard m (exit reason kill: its HBM-PS, MEM-PS and queues are
//                     gone; trainers get a down message). At t + d — and not before the killed
//                     incarnation has terminated (its down message: in real mode it may still be
//                     writing its SSD-PS when a short downtime ends) — it reopens m's SSD-PS folder
//                     — the recovery: ShardCore::Open reads the manifest, every file's keys and the
//                     tag that says which step is durable — spawns the shard's next incarnation
//                     from there (its SSD busy for the bytes recovery read) and tells every trainer
//                     and partitioner (PsShardRestarted), which re-send what it had not
//                     acknowledged. With d = 0 the node stays down: the run fails naming it.
//   slow, disk        windows the shards read from their PsNodeFaults; the injector only records
//                     when each begins and ends.
// Every event goes to the collector as a PsFaultRecord (faults.csv). Events after the run's end
// never fire. Deterministic in emulated mode: timers on the virtual clock.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <vector>

#include "actors/ps/shard_actor.hpp"
#include "faults/fault_plan.hpp"

namespace troupe {

struct PsFaultInjectorSetup {
  FaultPlan plan;
  PsOptions options;  // ssd_dir: node m's SSD-PS is <ssd_dir>/node-<m>
  std::vector<caf::actor> shards, trainers, partitioners;
  caf::actor collector;
  RunClock clock;
  Telemetry* telemetry = nullptr;
};

struct PsFaultInjectorState {
  PsFaultInjectorSetup setup;
  std::vector<int32_t> incarnation;  // by node
  std::vector<bool> down;            // by node
  std::vector<bool> gone;            // by node: the killed incarnation has terminated
  std::vector<int32_t> restart;      // by node: the crash event whose restart is due, or -1
  static inline const char* name = "troupe.ps.fault_injector";
};

caf::behavior PsFaultInjectorActor(caf::stateful_actor<PsFaultInjectorState>* self,
                                   PsFaultInjectorSetup setup);

}  // namespace troupe
