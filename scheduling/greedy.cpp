#include "scheduling/greedy.hpp"

#include "scheduling/gpu_placement.hpp"
#include "scheduling/mechanism_registry.hpp"
#include "scheduling/rack_placement.hpp"

namespace troupe::scheduling {

std::vector<JobPlacement> GreedyMechanism::PlaceRound(const std::vector<const SchedJob*>& ordered,
                                                      ClusterLedger& ledger) {
  index_.Reset(ledger);
  failed_.clear();
  const RoundDemands demands(ledger);
  std::vector<JobPlacement> placements;
  for (const SchedJob* queued : ordered) {
    if (ledger.free_gpus() == 0) break;
    const SchedJob& job = *queued;
    if (job.gpus <= 0 || job.gpus > ledger.free_gpus()) continue;
    PlacementParts parts = Fit(demands, demands.Prepare(job), ledger);
    if (parts.empty()) continue;  // skipped this round; a later job may still fit
    for (const PlacementPart& p : parts) {
      ledger.Take(p.server, p.gpus, p.cpus, p.memory_gb);
      index_.Update(ledger, p.server);
    }
    placements.push_back(JobPlacement{job.id, std::move(parts), &job});
  }
  return placements;
}

PlacementParts GreedyMechanism::Fit(const RoundDemands& demands, const RoundDemands::Job& job,
                                    const ClusterLedger& ledger) {
  const auto ideal = [&](int32_t server, int32_t gpus) { return demands.Ideal(job, server, gpus); };
  // Several GPU types: first fit at the ideal on the job's fastest type that holds it
  // (docs/heterogeneity.md); one type keeps the search below exactly.
  if (ledger.type_count() > 1) return PlaceGpusByType(ledger, *job.job, ideal);
  const int32_t gpus = job.gpus;
  if (ledger.SomeServerHasFreeGpus(gpus)) {
    const AuxDemand bound = demands.IdealBound(job);
    for (const PlacementPart& f : failed_) {
      if (f.gpus <= gpus && f.cpus <= bound.cpus && f.memory_gb <= bound.memory_gb) return {};
    }
    const int32_t server = index_.Find(ledger, gpus, bound, ideal);
    if (server < 0) {
      if (demands.uniform()) failed_.push_back({-1, gpus, bound.cpus, bound.memory_gb});
      return {};
    }
    const AuxDemand aux = ideal(server, gpus);
    return {PlacementPart{server, gpus, aux.cpus, aux.memory_gb}};
  }
  PlacementParts parts = SpreadGpus(ledger, gpus, job.job);
  if (!MaySpread(ledger, *job.job, parts)) return {};
  for (PlacementPart& p : parts) {
    const AuxDemand aux = ideal(p.server, p.gpus);
    if (!ledger.Fits(p.server, p.gpus, aux.cpus, aux.memory_gb)) {
      // Not taken: the spread the interleave scorer noted must not count as traffic.
      if (SpreadScorer* scorer = ledger.spread_scorer()) scorer->Forget(job.id);
      return {};
    }
    p.cpus = aux.cpus;
    p.memory_gb = aux.memory_gb;
  }
  return parts;
}

namespace {

std::unique_ptr<Mechanism> MakeGreedy(const MechanismOptions&) {
  return std::make_unique<GreedyMechanism>();
}

const MechanismRegistrar kGreedyRegistrar({
    .name = "greedy",
    .summary = "first fit at each job's ideal CPUs and memory (Synergy-GREEDY)",
    .make = MakeGreedy,
    .reads_until_full = true,
});

}  // namespace

}  // namespace troupe::scheduling
