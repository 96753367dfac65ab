// The PsOptions a config's paramserver block describes: the one conversion from the config to
// what every actor of a parameter-server run is configured with. The run plans with it
// (runner/ps/ps_run.hpp), and a `troupe node` hosting a shard or a feed builds the same options
// from the block the run sends it (PsShardSpawn, messages/ps_messages.hpp; remote_shard.hpp).
//
// What the block does not say is the run's: the model's seed (run.seed), the store identity it
// draws, whether updates are written through (its faults), the size of the final parameters'
// messages; the caller sets those on the result.
#pragma once

#include <cstdint>

#include "config/config.pb.h"
#include "paramserver/ps_options.hpp"

namespace troupe {

// `block`'s options, the model seeded with `seed`; an HBM-PS in device memory (hbm_backend
// "cuda") comes from this build's CUDA plugin.
PsOptions PsOptionsOf(const config::ParamServer& block, uint64_t seed);

}  // namespace troupe
