// Mechanism: places the jobs of one round. Jobs are offered GPUs in the policy's order; a job
// whose GPUs cannot all be had this round is skipped and the next one is tried (Synergy's
// simulator does the same), until the cluster's GPUs are used up. The ledger starts the round
// empty and ends it holding exactly what the returned placements lease.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/placement.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

enum class MechanismKind { kProportional, kGreedy, kTune, kOpt };

std::string_view MechanismName(MechanismKind kind);

class Mechanism {
 public:
  virtual ~Mechanism() = default;
  virtual MechanismKind kind() const = 0;
  virtual std::vector<JobPlacement> PlaceRound(const std::vector<const SchedJob*>& ordered,
                                               ClusterLedger& ledger) = 0;
};

struct MechanismOptions {
  // TUNE: place by (GPUs, CPUs, memory) demand, largest first, instead of the policy's order.
  bool tune_sort_by_demand = false;
};

// The mechanism of that kind, or nullptr where troupe does not have it yet.
std::unique_ptr<Mechanism> MakeMechanism(MechanismKind kind, const MechanismOptions& options = {});

}  // namespace troupe::scheduling
