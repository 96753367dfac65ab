// GPU-proportional placement: every job gets CPUs and memory in proportion to its GPUs on each
// server it uses (capacity / GPUs per GPU: 3 CPUs and 62.5 GB on Synergy's 8-GPU servers). The
// baseline every prior DNN cluster scheduler uses, and the share Synergy never goes below.
#pragma once

#include "scheduling/mechanism.hpp"

namespace troupe::scheduling {

class ProportionalMechanism : public Mechanism {
 public:
  std::vector<JobPlacement> PlaceRound(const std::vector<const SchedJob*>& ordered,
                                       ClusterLedger& ledger) override;
};

}  // namespace troupe::scheduling
