// Dorm as a baseline (Sun et al., "Dorm: dynamic partitioning of ML clusters", the paper's [18]):
// every valid job is admitted; each slot the cluster is re-partitioned among the active jobs by
// a MILP that maximises utilisation subject to a fairness bound, solved with GLPK.
//
// The slot's MILP over the n active jobs (u_i = WorkerShare(), the dominant share of one worker
// with its b_i / B_i parameter servers; cap_i = min(N_i, remaining worker-slots)):
//   max  sum_i y_i sum_r w_i^r / C_w^r  -  1e-6 sum_i z_i     (worker-pool utilisation)
//   s.t. sum_i w_i^r y_i <= C_w^r,  sum_i s_i^r z_i <= C_ps^r  for every resource r  (pool totals)
//        B_i z_i >= b_i y_i  (6),   z_i <= y_i  (7),   y_i, z_i integer
//        fairness, phi = DormOptions::fairness (2):
//          u_i y_i <= phi / n                                   (at most phi x the equal share)
//          y_i >= min(cap_i, floor(1 / (phi n u_i)))            (at least 1/phi of it, or all
//                                                                it can use)
//        0 <= y_i <= cap_i
// Summed over the jobs the lower bounds use at most 1/phi of every pool resource, so the MILP is
// feasible unless rounding up PS overflows the PS pool. The targets are placed first-fit
// (SlotPacker) in job order; a target that does not fit on the machines is cut short. If GLPK
// fails (no integer solution within the node bound, or an error) the slot falls back to DRF.
//
// The search is bounded by a count, not a clock: GLPK's branch and bound stops once it has
// created DormOptions::node_limit nodes and the best integer solution found so far is used (its
// simplex runs at each node are finite). GLPK's search is deterministic, so the targets, and a
// whole Dorm run, depend only on the jobs and the options, never on the machine's speed or load.
// The MILP itself is unchanged; the bound only decides how long to look for a better incumbent.
//
// Contract: deterministic (same input, same GLPK build: same targets).
#pragma once

#include <string>
#include <vector>

#include "scheduling/oasis/baselines.hpp"

namespace troupe::scheduling::oasis {

struct DormOptions {
  double fairness = 2;  // phi
  // Branch-and-bound nodes GLPK may create per slot (> 0); the search stops there.
  int node_limit = 50000;
};

struct DormTargets {
  bool solved = false;            // GLPK found an integer solution (optimal or not)
  std::string status;             // "optimal", "feasible" (node bound reached) or "failed: ..."
  int nodes = 0;                  // branch-and-bound nodes created
  std::vector<int> workers, ps;   // per job given
  std::vector<double> low_share;  // the bounds on u_i y_i the MILP enforced
  std::vector<double> high_share;
  double utilisation = 0;  // the objective's first term
};

// The MILP of one slot over `jobs` with the given caps.
DormTargets SolveDormSlot(const PoolTotals& totals, const std::vector<const Job*>& jobs,
                          const std::vector<int>& caps, const DormOptions& options = {});

class DormPolicy : public OnlinePolicy {
 public:
  explicit DormPolicy(const Cluster& cluster, DormOptions options = {})
      : cluster_(cluster), totals_(Totals(cluster)), options_(options) {}
  std::string_view name() const override { return "dorm"; }
  Admission Arrive(int index, const std::vector<JobProgress>& jobs) override;
  SlotAllocation Slot(int t, const std::vector<JobProgress>& jobs) override;

  int fallbacks() const { return fallbacks_; }  // slots that fell back to DRF
  int bounded() const { return bounded_; }      // slots whose search stopped at the node bound
  int max_nodes() const { return max_nodes_; }  // the most nodes a slot's search created

 private:
  Cluster cluster_;
  PoolTotals totals_;
  DormOptions options_;
  int fallbacks_ = 0;
  int bounded_ = 0;
  int max_nodes_ = 0;
};

}  // namespace troupe::scheduling::oasis
