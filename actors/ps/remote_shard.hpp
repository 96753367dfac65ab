// A parameter-server shard hosted by a `troupe node` process (docs/paramserver.md, "Across
// processes"). The run sends the node a PsShardSpawn (the config's paramserver block, what the run
// adds to it, and the run's virtual time); the node opens the shard's SSD-PS folder, recovers what
// it holds, and spawns the same ShardActor a one-process run spawns. Pulls, pushes and prepares
// then cross CAF's middleman as the messages they always were (one per batch and peer).
#pragma once

#include <caf/actor_clock.hpp>
#include <caf/event_based_actor.hpp>

#include "base/status.hpp"
#include "config/config.pb.h"
#include "messages/ps_messages.hpp"
#include "paramserver/ps_options.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

// What the run sends to host shard `shard`: `block`, the config's paramserver block, with the
// values the run resolved (ssd_dir, batches) and those the block does not say (seed, store
// identity, write-through, final message size) taken from `options`, the run's; `virtual_now_s`
// is the run's virtual time now.
PsShardSpawn ShardSpawnOf(const config::ParamServer& block, const PsOptions& options, int32_t shard,
                          const caf::actor& collector, double virtual_now_s, double time_scale);

// The PsOptions a PsShardSpawn carries, built as the run built its own (ps_options_of.hpp; a
// device HBM-PS comes from this build's plugin). InvalidInput when its block does not parse.
Status OptionsOf(const PsShardSpawn& spec, PsOptions* options);

// On the node: opens <ssd_dir>/node-<shard>, recovers it, and spawns the shard actor (its clock
// starts at the run's virtual time). Failing to open is answered with `error`, not an actor.
PsShardSpawned SpawnShardHere(caf::event_based_actor* node, const PsShardSpawn& spec,
                              Telemetry* telemetry);

}  // namespace troupe
