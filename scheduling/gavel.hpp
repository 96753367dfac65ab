// GavelMechanism: Gavel's heterogeneity-aware policies with its round-based allocation
// (Narayanan et al., OSDI '20, sections 4 and 5). Registered as four mechanisms:
//   gavel_las            max-min fairness over effective throughput ("LAS" in the paper)
//   gavel_ftf            finish-time fairness
//   gavel_las_agnostic   the same programs blind to types: the heterogeneity-agnostic
//   gavel_ftf_agnostic   baselines of the paper's figures. They are solved over one pool of all
//                        the GPUs, and each job's share is spread over the types in proportion
//                        to their GPUs (what a type-blind scheduler gives a job on average).
// They decide both who runs and where, so the configured policy only breaks ties.
//
// Each round, over the runnable jobs: the allocation X[j][t] (gavel_lp.hpp) from each job's
// throughput on each type (its type speed over its iteration time), its elapsed time and the
// iterations it has left; then each (job, type) pair gets the priority X[j][t] / (the share of
// the rounds since the job was first offered in which it ran on type t), infinite while it has
// not run there yet and X > 0. Pairs are offered GPUs in priority order (ties: larger X, the
// policy's order, lower type); a job takes the first pair whose type has room for all its GPUs
// (PlaceGpus restricted to that type, CPUs and memory in proportion), so a job never spans
// types. Pairs with X = 0 come last, so no GPU idles that a waiting job could use.
//
// So a job wider than every type's surviving GPUs is never placed: WhyNeverPlaced says so, and
// the scheduler fails it (a job wider than the cluster, as any mechanism).
//
// Elapsed time is reckoned by the mechanism: a round starts round_s after the one before, or at
// the latest arrival or service it sees if later (an idle cluster skips rounds). Deterministic.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <string>
#include <vector>

#include "scheduling/gavel_lp.hpp"
#include "scheduling/mechanism.hpp"

namespace troupe::scheduling {

class GavelMechanism : public Mechanism {
 public:
  GavelMechanism(GavelObjective objective, bool heterogeneity_aware, double round_s);

  std::vector<JobPlacement> PlaceRound(const std::vector<const SchedJob*>& ordered,
                                       ClusterLedger& ledger) override;
  std::string WhyNeverPlaced(int32_t gpus, const SurvivingGpus& surviving) const override;

  // The allocation the last round was planned from (rows in the order the jobs were offered).
  const GavelAllocation& last_allocation() const { return allocation_; }

 private:
  struct History {
    int64_t rounds_offered = 0;
    std::vector<int64_t> rounds_on;  // per type
  };
  struct Candidate {
    size_t job = 0;  // index into the round's ordered jobs
    int32_t type = 0;
    bool unserved = false;  // X > 0 and never ran there: ahead of every finite priority
    double priority = 0;
    double x = 0;
  };

  double EstimateNow(const std::vector<const SchedJob*>& ordered);
  std::vector<GavelJob> ProgramJobs(const std::vector<const SchedJob*>& ordered,
                                    int32_t types) const;
  std::vector<Candidate> Candidates(const std::vector<const SchedJob*>& ordered,
                                    int32_t types) const;
  void Remember(const std::vector<const SchedJob*>& ordered, const std::vector<int32_t>& type_of,
                int32_t types);

  GavelObjective objective_;
  bool aware_;
  double round_s_;
  double now_s_ = -1;
  GavelAllocation allocation_;
  absl::flat_hash_map<int64_t, History> history_;
};

}  // namespace troupe::scheduling
