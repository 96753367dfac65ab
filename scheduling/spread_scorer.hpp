// SpreadScorer: what the shared placement asks, when the ledger has one, to choose among several
// spreads of a job over servers (config fabric.placement rule interleave; docs/network.md,
// "Placement"). The placement code knows servers and racks, not traffic: the scorer, set on the
// ledger by the round engine, is the one door to what the fabric knows (scheduling/
// interleave_scorer.hpp implements it over FabricRound).
//
// Contract: Score rates a candidate spread of `job` against the spreads noted since the last
// Clear, in [0, 1], 1 the best (and the score of a spread that meets no noted traffic); it changes
// nothing. Note records the spread chosen for the job (a later Note of the same job replaces it);
// Forget drops it (a mechanism that chose the spread and then could not take it).
// The ledger calls Clear on every Reset, so the noted spreads are those of the round being planned.
#pragma once

#include <cstdint>

#include "scheduling/placement.hpp"

namespace troupe::scheduling {

class ClusterLedger;

class SpreadScorer {
 public:
  virtual ~SpreadScorer() = default;
  virtual void Clear() = 0;
  virtual double Score(const ClusterLedger& ledger, const SchedJob& job,
                       const PlacementParts& parts) const = 0;
  virtual void Note(const ClusterLedger& ledger, const SchedJob& job,
                    const PlacementParts& parts) = 0;
  virtual void Forget(int64_t job_id) = 0;
  // How many distinct spreads of one job are scored at most.
  virtual int32_t candidates() const = 0;
};

}  // namespace troupe::scheduling
