// The interleaving spread (config fabric.placement rule interleave; docs/network.md, "Placement"):
// with a SpreadScorer on the ledger, a job that spans servers is spread several ways — the
// consolidating spread first (rack_placement.hpp), then the same spread started in each other rack
// that holds the whole job (the tightest first), then in each other rack with free GPUs (the
// freest first), `candidates` spreads at most — and the one the scorer rates best is taken (ties:
// the earlier, so where no traffic is around it is the consolidating spread). CASSINI (NSDI '24)
// picks among candidate placements the same way.
//
// Contract: ChooseSpread calls build(first_rack) for each candidate start (-1: the consolidating
// order), skips the empty and repeated spreads, notes the chosen one on the scorer, and returns
// it; without a scorer, a job or racks it returns build(-1) and notes nothing. It changes no
// ledger count.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/placement.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

// The racks the candidate spreads of `gpus` GPUs start in, after the consolidating one (which is
// not listed): at most `more`.
std::vector<int32_t> CandidateFirstRacks(const ClusterLedger& ledger, int32_t gpus, int32_t more);

using BuildSpread = std::function<PlacementParts(int32_t first_rack)>;

PlacementParts ChooseScoredSpread(const ClusterLedger& ledger, const SchedJob& job, int32_t gpus,
                                  const BuildSpread& build);

template <typename Build>
PlacementParts ChooseSpread(const ClusterLedger& ledger, const SchedJob* job, int32_t gpus,
                            Build&& build) {
  if (ledger.spread_scorer() == nullptr || job == nullptr || ledger.racks() == nullptr) {
    return build(-1);
  }
  return ChooseScoredSpread(ledger, *job, gpus, BuildSpread(build));
}

}  // namespace troupe::scheduling
