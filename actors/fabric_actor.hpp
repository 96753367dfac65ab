// The fabric actor: the run's network between servers as an actor (docs/network.md, "Real runs").
// It owns the run's topology (fabric/topology.hpp) and the max-min sharing of its links among the
// flows in flight (fabric/flow_sharing.hpp), and paces transfers: a sender tells it FlowStart
// before moving bytes from one server to another and moves them when FlowDone comes back
// (messages/fabric_messages.hpp).
//
// The model is the exact fluid one: every flow drains its remaining bytes at its current max-min
// rate; each start, stop and completion re-shares the links and re-times every flow's remaining
// bytes at its new rate. A flow is done when its bytes are through; FlowDone then reaches its
// sender after the route's one-way latency. A flow inside one server (no link) is done at once.
// One timer is pending at any time, at the next completion; a re-share supersedes it.
//
// Contract: time comes only from the actor clock (in real mode the wall clock, so transfers take
// the wall seconds their bytes need at their share; in emulated mode the virtual clock). A flow is
// named by its sender and its key; a FlowStart with a key in flight replaces that flow, a
// FlowStop for an unknown key is ignored, and a flow between servers outside the topology is
// answered at once (FlowDone, 0 seconds) and counted in nothing.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/atom.hpp>
#include <caf/stateful_actor.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "fabric/flow_sharing.hpp"
#include "fabric/topology.hpp"
#include "messages/fabric_messages.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

using fabric_tick_atom = caf::atom_constant<caf::atom("fab_tick")>;  // the next completion

struct FabricFlow {
  fabric::FlowId id = 0;
  caf::actor sender;
  int64_t key = 0;
  double remaining_bytes = 0;
  double latency_s = 0;
  double started_s = 0;
};

struct FabricActorState {
  fabric::Topology topology;
  std::unique_ptr<fabric::FlowSharing> sharing;
  RunClock clock;  // the fabric's seconds: the actor clock since spawn, unscaled
  Telemetry* telemetry = nullptr;
  std::map<std::pair<caf::actor_addr, int64_t>, FabricFlow> flows;
  double drained_to_s = 0;  // the flows' remaining bytes are as of this instant
  int64_t timer = 0;        // the pending tick's number; older ticks are stale
  std::vector<int32_t> route;
  static inline const char* name = "troupe.fabric";
};

caf::behavior FabricActor(caf::stateful_actor<FabricActorState>* self, fabric::Topology topology,
                          Telemetry* telemetry);

// The same, timed on the run's clock: a flow's seconds are the run's (in a real run the wall
// seconds times clock.time_scale), as for senders whose other durations are scaled too (the
// parameter-server run's modelled stages, docs/paramserver.md).
caf::behavior FabricActorOnClock(caf::stateful_actor<FabricActorState>* self,
                                 fabric::Topology topology, Telemetry* telemetry, RunClock clock);

}  // namespace troupe
