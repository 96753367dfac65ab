#include "scheduling/interleave_placement.hpp"

#include <algorithm>

#include "scheduling/rack_placement.hpp"

namespace troupe::scheduling {

std::vector<int32_t> CandidateFirstRacks(const ClusterLedger& ledger, int32_t gpus, int32_t more) {
  // The consolidating spread's own order, after the rack it starts in.
  std::vector<bool> taken(ledger.racks()->racks(), false);
  std::vector<int32_t> order;
  for (int32_t rack = NextSpreadRack(ledger, gpus, taken); rack >= 0;
       rack = NextSpreadRack(ledger, gpus, taken)) {
    taken[rack] = true;
    if (static_cast<int32_t>(order.size()) == std::max(more, 0) + 1) break;
    order.push_back(rack);
  }
  if (!order.empty()) order.erase(order.begin());  // the consolidating spread's first rack
  return order;
}

namespace {

bool SameServers(const PlacementParts& a, const PlacementParts& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const PlacementPart& x, const PlacementPart& y) {
                      return x.server == y.server && x.gpus == y.gpus;
                    });
}

}  // namespace

PlacementParts ChooseScoredSpread(const ClusterLedger& ledger, const SchedJob& job, int32_t gpus,
                                  const BuildSpread& build) {
  SpreadScorer& scorer = *ledger.spread_scorer();
  PlacementParts best = build(-1);
  double best_score = best.size() > 1 ? scorer.Score(ledger, job, best) : 1;
  std::vector<PlacementParts> tried;
  if (best.size() > 1 && best_score < 1) {
    tried.push_back(best);
    for (int32_t rack : CandidateFirstRacks(ledger, gpus, scorer.candidates() - 1)) {
      PlacementParts parts = build(rack);
      if (parts.size() < 2 || std::any_of(tried.begin(), tried.end(),
                                          [&](const auto& t) { return SameServers(t, parts); })) {
        continue;
      }
      const double score = scorer.Score(ledger, job, parts);
      tried.push_back(parts);
      if (score > best_score + 1e-9) {
        best_score = score;
        best = std::move(parts);
        if (best_score >= 1) break;  // nothing scores higher
      }
    }
  }
  if (best.size() > 1) scorer.Note(ledger, job, best);
  return best;
}

}  // namespace troupe::scheduling
