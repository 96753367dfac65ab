#include "scheduling/proportional.hpp"

#include "scheduling/gpu_placement.hpp"
#include "scheduling/mechanism_registry.hpp"

namespace troupe::scheduling {

std::vector<JobPlacement> ProportionalMechanism::PlaceRound(
    const std::vector<const SchedJob*>& ordered, ClusterLedger& ledger) {
  const AuxDemandFn proportional = [&ledger](int32_t server, int32_t gpus) {
    return AuxDemand{ledger.ProportionalCpus(server, gpus),
                     ledger.ProportionalMemoryGb(server, gpus)};
  };
  std::vector<JobPlacement> placements;
  for (const SchedJob* job : ordered) {
    if (ledger.free_gpus() == 0) break;
    PlacementParts parts = PlaceGpusByType(ledger, *job, proportional);
    if (parts.empty()) continue;  // not this round; the next job may still fit
    for (const PlacementPart& p : parts) ledger.Take(p.server, p.gpus, p.cpus, p.memory_gb);
    placements.push_back(JobPlacement{job->id, std::move(parts), job});
  }
  return placements;
}

namespace {

std::unique_ptr<Mechanism> MakeProportional(const MechanismOptions&) {
  return std::make_unique<ProportionalMechanism>();
}

const MechanismRegistrar kProportionalRegistrar({
    .name = "proportional",
    .summary = "CPUs and memory in proportion to the GPUs (the baseline)",
    .make = MakeProportional,
    .proportional_share_only = true,
    .reads_until_full = true,
});

}  // namespace

}  // namespace troupe::scheduling
