// InterleaveScorer: the SpreadScorer of fabric.placement rule interleave (docs/network.md,
// "Placement"). A candidate spread is scored as CASSINI (NSDI '24) scores a placement: on each
// link it shares with the jobs noted this round, the jobs' bursts laid on the link's unified
// circle (fabric/interleave.hpp); the candidate rotated to the one time-shift that suits all those
// links best, the others kept where they are; the score the mean over those links. A job that
// runs on the same parts as in the round before is scored at the shift it runs with. The shifts
// the round's jobs then run with are FabricRound's (one walk over the jobs and the links they
// share, docs/network.md "Interleaving"), which may differ from the rotations scored here.
//
// Contract: what a job sends and how long it computes come from the FabricRound it is built over
// (FabricRound::CycleOn; the compute is the job's iteration time at the proportional share on its
// slowest GPU type); Score reads, Note records, Clear forgets. Plain code: no actor, no clock.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <vector>

#include "fabric/interleave.hpp"
#include "scheduling/fabric_round.hpp"
#include "scheduling/spread_scorer.hpp"

namespace troupe::scheduling {

class InterleaveScorer final : public SpreadScorer {
 public:
  InterleaveScorer(const FabricRound& fabric, int32_t candidates)
      : fabric_(fabric), candidates_(candidates) {}

  void Clear() override;
  double Score(const ClusterLedger& ledger, const SchedJob& job,
               const PlacementParts& parts) const override;
  void Note(const ClusterLedger& ledger, const SchedJob& job, const PlacementParts& parts) override;
  void Forget(int64_t job_id) override;
  int32_t candidates() const override { return candidates_; }

 private:
  fabric::CycleJob CycleOf(const ClusterLedger& ledger, const SchedJob& job,
                           const PlacementParts& parts) const;
  // The cycle's links beside the noted jobs' bursts on them (other than job_id's).
  std::vector<fabric::LinkShare> SharesOf(const fabric::CycleJob& cycle, int64_t job_id) const;

  const FabricRound& fabric_;
  const int32_t candidates_;
  std::vector<std::pair<int64_t, fabric::CycleJob>> noted_;  // by slot
  absl::flat_hash_map<int64_t, size_t> slot_of_job_;
  absl::flat_hash_map<int32_t, std::vector<size_t>> slots_on_link_;
};

}  // namespace troupe::scheduling
