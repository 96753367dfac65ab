// Synergy-GREEDY: the strawman of the Synergy paper (OSDI '22, section 4). Jobs are taken in the
// policy's order and placed first-fit at their ideal CPUs and memory (demand.hpp): a job whose
// GPUs fit one server is consolidated on the best fit among the servers that hold its whole
// demand; one whose GPUs fit no single server is spread over the fewest servers (most free GPUs
// first), each part at its ideal. A job that does not fit in every dimension is skipped this round
// and later jobs are still tried, so CPUs and memory can run out while GPUs stay idle and skipped
// jobs starve: exactly the behaviour the paper argues against. Deterministic; the ledger ends
// holding exactly the returned placements, which are in the policy's order.
#pragma once

#include "scheduling/demand.hpp"
#include "scheduling/fit_index.hpp"
#include "scheduling/mechanism.hpp"

namespace troupe::scheduling {

class GreedyMechanism : public Mechanism {
 public:
  std::vector<JobPlacement> PlaceRound(const std::vector<const SchedJob*>& ordered,
                                       ClusterLedger& ledger) override;

 private:
  // The job's parts at its ideal demand, or none where it does not fit.
  PlacementParts Fit(const RoundDemands& demands, const RoundDemands::Job& job,
                     const ClusterLedger& ledger);

  FitIndex index_;
  // Uniform clusters: consolidated demands (GPUs, CPUs, memory) that found no server. The ledger
  // only shrinks during a round, so any demand at least as large in all three fails too.
  std::vector<PlacementPart> failed_;
};

}  // namespace troupe::scheduling
