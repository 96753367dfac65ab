// A parameter-server node's trainer and its feed (reader and partitioner) hosted by a `troupe
// node` process (paramserver.trainer_hosts; docs/paramserver.md, "Across processes"). The run
// sends the node a PsFeedSpawn (the run's options and clock, flat, and the shards wherever they
// live); the node spawns the same three actors a one-process run spawns, on a clock that starts
// at the run's virtual time. The reader holds no data yet: the run sends its node's batches
// (SendFeedExamples) right after, and the trainers their peers (PsPeers). Pulls, pushes, the
// dense all-reduce and the reports then cross CAF's middleman as the messages they always were.
#pragma once

#include <caf/actor.hpp>
#include <caf/event_based_actor.hpp>
#include <span>

#include "messages/ps_messages.hpp"
#include "paramserver/criteo.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

// On the node: spawns trainer, partitioner and reader of node `feed.spec.shard`. A PsFeedSpawn
// whose shard list does not match its node count is answered with `error`, not actors.
PsFeedSpawned SpawnFeedHere(caf::event_based_actor* node, const PsFeedSpawn& feed,
                            Telemetry* telemetry);

// In the run: sends `reader` (node `node` of `nodes`) its batches of the whole stream `train`
// (step s: examples [(s * nodes + node) * batch_size, + batch_size)), steps 0..steps-1, as
// PsExamples of at most about 4 MiB each (one step at least), in step order.
// Counted in `telemetry` (runtime/counted_send.hpp: TellAnon).
void SendFeedExamples(Telemetry* telemetry, const caf::actor& reader, int32_t node, int32_t nodes,
                      int32_t batch_size, int64_t steps,
                      std::span<const paramserver::Example> train);

}  // namespace troupe
