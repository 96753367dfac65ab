// Chooses the servers for one job's GPUs, given what each part needs besides GPUs.
//
// A job whose GPUs fit on one server is consolidated there, on the best fit: the server with the
// fewest free GPUs that still holds the whole part (ties: lowest index). Otherwise it is spread
// over the fewest servers: those with the most free GPUs first. Returns no parts when the job
// cannot be placed; the ledger is not changed (the caller takes what it accepts).
#pragma once

#include <functional>
#include <vector>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/placement.hpp"

namespace troupe::scheduling {

// CPUs and memory a part of `gpus` GPUs on `server` needs.
struct AuxDemand {
  double cpus = 0;
  double memory_gb = 0;
};
using AuxDemandFn = std::function<AuxDemand(int32_t server, int32_t gpus)>;

std::vector<PlacementPart> PlaceGpus(const ClusterLedger& ledger, int32_t gpus,
                                     const AuxDemandFn& demand);

}  // namespace troupe::scheduling
