#include "scheduling/gpu_placement.hpp"

#include <algorithm>

namespace troupe::scheduling {
namespace {

bool PartFits(const ClusterLedger& ledger, int32_t server, int32_t gpus, const AuxDemand& aux) {
  return ledger.Fits(server, gpus, aux.cpus, aux.memory_gb);
}

std::vector<PlacementPart> Consolidate(const ClusterLedger& ledger, int32_t gpus,
                                       const AuxDemandFn& demand) {
  for (int32_t free = gpus; free <= ledger.max_server_gpus(); ++free) {
    for (int32_t server : ledger.ServersWithFreeGpus(free)) {
      const AuxDemand aux = demand(server, gpus);
      if (PartFits(ledger, server, gpus, aux)) {
        return {PlacementPart{server, gpus, aux.cpus, aux.memory_gb}};
      }
    }
  }
  return {};
}

std::vector<PlacementPart> Spread(const ClusterLedger& ledger, int32_t gpus,
                                  const AuxDemandFn& demand) {
  std::vector<PlacementPart> parts;
  int32_t left = gpus;
  for (int32_t free = ledger.max_server_gpus(); free >= 1 && left > 0; --free) {
    for (int32_t server : ledger.ServersWithFreeGpus(free)) {
      // The largest share of the remaining GPUs whose auxiliary demand also fits here.
      for (int32_t take = std::min(free, left); take >= 1; --take) {
        const AuxDemand aux = demand(server, take);
        if (PartFits(ledger, server, take, aux)) {
          parts.push_back({server, take, aux.cpus, aux.memory_gb});
          left -= take;
          break;
        }
      }
      if (left == 0) break;
    }
  }
  if (left > 0) parts.clear();
  return parts;
}

}  // namespace

std::vector<PlacementPart> PlaceGpus(const ClusterLedger& ledger, int32_t gpus,
                                     const AuxDemandFn& demand) {
  if (gpus <= 0 || gpus > ledger.free_gpus()) return {};
  if (gpus <= ledger.max_server_gpus()) {
    std::vector<PlacementPart> parts = Consolidate(ledger, gpus, demand);
    if (!parts.empty()) return parts;
  }
  return Spread(ledger, gpus, demand);
}

}  // namespace troupe::scheduling
