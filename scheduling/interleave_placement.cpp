#include "scheduling/interleave_placement.hpp"

#include <algorithm>

#include "scheduling/rack_placement.hpp"

namespace troupe::scheduling {

std::vector<int32_t> CandidateFirstRacks(const ClusterLedger& ledger, int32_t gpus, int32_t more) {
  const int32_t racks = ledger.racks()->racks();
  const int32_t consolidating = NextSpreadRack(ledger, gpus, std::vector<bool>(racks, false));
  std::vector<int32_t> holding, others;
  for (int32_t r = 0; r < racks; ++r) {
    const int32_t free = ledger.rack_free_gpus(r);
    if (r == consolidating || free == 0) continue;
    (free >= gpus ? holding : others).push_back(r);
  }
  // Tightest holding rack first, then the freest of the others; ties: lowest index.
  std::stable_sort(holding.begin(), holding.end(), [&](int32_t a, int32_t b) {
    return ledger.rack_free_gpus(a) < ledger.rack_free_gpus(b);
  });
  std::stable_sort(others.begin(), others.end(), [&](int32_t a, int32_t b) {
    return ledger.rack_free_gpus(a) > ledger.rack_free_gpus(b);
  });
  holding.insert(holding.end(), others.begin(), others.end());
  if (static_cast<int32_t>(holding.size()) > more) holding.resize(std::max(more, 0));
  return holding;
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
