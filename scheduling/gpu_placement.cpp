#include "scheduling/gpu_placement.hpp"

#include <algorithm>

#include "scheduling/interleave_placement.hpp"
#include "scheduling/rack_placement.hpp"

namespace troupe::scheduling {
namespace {

bool PartFits(const ClusterLedger& ledger, int32_t server, int32_t gpus, const AuxDemand& aux) {
  return ledger.Fits(server, gpus, aux.cpus, aux.memory_gb);
}

bool OfType(const ClusterLedger& ledger, int32_t server, int32_t gpu_type) {
  return gpu_type == kAnyGpuType || ledger.shape(server).gpu_type == gpu_type;
}

PlacementParts Consolidate(const ClusterLedger& ledger, int32_t gpus, const AuxDemandFn& demand,
                           int32_t gpu_type) {
  for (int32_t free = gpus; free <= ledger.max_server_gpus(); ++free) {
    for (int32_t server : ledger.ServersWithFreeGpus(free)) {
      if (!OfType(ledger, server, gpu_type)) continue;
      const AuxDemand aux = demand(server, gpus);
      if (PartFits(ledger, server, gpus, aux)) {
        return {PlacementPart{server, gpus, aux.cpus, aux.memory_gb}};
      }
    }
  }
  return {};
}

PlacementParts Spread(const ClusterLedger& ledger, int32_t gpus, const AuxDemandFn& demand,
                      int32_t gpu_type, int32_t first_rack) {
  PlacementParts parts;
  int32_t left = gpus;
  ForEachSpreadServer(
      ledger, gpus,
      [&](int32_t server, int32_t free) {
        if (!OfType(ledger, server, gpu_type)) return false;
        // The largest share of the remaining GPUs whose auxiliary demand also fits here.
        for (int32_t take = std::min(free, left); take >= 1; --take) {
          const AuxDemand aux = demand(server, take);
          if (PartFits(ledger, server, take, aux)) {
            parts.push_back({server, take, aux.cpus, aux.memory_gb});
            left -= take;
            break;
          }
        }
        return left == 0;
      },
      first_rack);
  if (left > 0) parts.clear();
  return parts;
}

}  // namespace

PlacementParts PlaceGpus(const ClusterLedger& ledger, int32_t gpus, const AuxDemandFn& demand,
                         int32_t gpu_type, const SchedJob* job) {
  if (gpus <= 0 || gpus > ledger.free_gpus()) return {};
  if (gpus <= ledger.max_server_gpus()) {
    PlacementParts parts = Consolidate(ledger, gpus, demand, gpu_type);
    if (!parts.empty()) return parts;
  }
  return ChooseSpread(ledger, job, gpus, [&](int32_t first_rack) {
    return Spread(ledger, gpus, demand, gpu_type, first_rack);
  });
}

std::vector<int32_t> TypesByJobSpeed(const ClusterLedger& ledger, const SchedJob& job) {
  std::vector<int32_t> types;
  for (int32_t t = 0; t < ledger.type_count(); ++t) {
    if (ledger.gpus_of_type(t) > 0) types.push_back(t);
  }
  std::stable_sort(types.begin(), types.end(),
                   [&job](int32_t a, int32_t b) { return job.TypeSpeed(a) > job.TypeSpeed(b); });
  return types;
}

PlacementParts PlaceGpusByType(const ClusterLedger& ledger, const SchedJob& job,
                               const AuxDemandFn& demand) {
  if (ledger.type_count() > 1) {
    // A spread the wait-or-spread rule holds back on one type does not stop the next type from
    // holding the job on one server.
    for (int32_t type : TypesByJobSpeed(ledger, job)) {
      PlacementParts parts = PlaceGpus(ledger, job.gpus, demand, type, &job);
      if (!parts.empty() && MaySpread(ledger, job, parts)) return parts;
    }
  }
  PlacementParts parts = PlaceGpus(ledger, job.gpus, demand, kAnyGpuType, &job);
  if (!MaySpread(ledger, job, parts)) parts.clear();
  return parts;
}

}  // namespace troupe::scheduling
