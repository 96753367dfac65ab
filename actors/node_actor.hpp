// The node actor: what `troupe node --listen HOST:PORT` publishes. A run elsewhere asks it to
// spawn server actors here (one per ServerSpec); they then take their leases over CAF's
// middleman exactly as local servers do. It also spawns all-reduce ranks (spawn_rank_atom) for
// collectives across processes, and parameter-server shards (spawn_ps_atom) and trainers with
// their feeds (spawn_feed_atom) of runs elsewhere.
// The node outlives runs; a run's servers exit with it. A run names its handle (an actor of its
// own process) with each server it asks for; when the handle goes down — the run ended, its
// process died, its connection was lost — the node stops that run's servers and lends their
// devices (--devices) again at once.
#pragma once

#include <caf/event_based_actor.hpp>

#include "runtime/telemetry.hpp"

namespace troupe {

caf::behavior NodeActor(caf::event_based_actor* self, Telemetry* telemetry,
                        std::vector<int32_t> devices);

}  // namespace troupe
