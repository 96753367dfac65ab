// The offline optimum of OASiS's problem: all jobs known in advance, the total utility of the
// admitted jobs maximised exactly with GLPK's branch and cut. The paper's ILP (14) picks one
// schedule per job out of exponentially many; this is the same optimum written compactly (the
// seed's problem (1)) with one binary u_i(t) per candidate end slot instead of constraint (8):
//   max  sum_i sum_{t >= a_i} f_i(t - a_i) u_i(t)
//   s.t. sum_t u_i(t) <= 1                                  (admitted at most once)
//        sum_h y_ih(t) <= N_i sum_{t' >= t} u_i(t')         (3), and no work after the end slot
//        sum_t sum_h y_ih(t) >= W_i sum_t u_i(t)            (2), W_i = Job::WorkerSlots()
//        B_i sum_k z_ik(t) >= b_i sum_h y_ih(t)             (6)
//        sum_k z_ik(t) <= sum_h y_ih(t)                     (7)
//        sum_i w_i^r y_ih(t) <= c_h^r, sum_i s_i^r z_ik(t) <= c_k^r   (4), (5)
//        y, z integer >= 0, zero before a_i                 (9)-(13)
// Since f_i is non-increasing, an optimum puts u_i on the real last slot holding workers, so the
// optimum equals (14)'s. Meant for small instances (the largest tested: <= 20 jobs, <= 4 machines
// of each kind, <= 12 slots); larger ones run into the time limit.
//
// Solver: GLPK's simplex on the relaxation, then branch and cut (Gomory, MIR, cover and clique
// cuts; pseudocost branching; best-bound backtracking) started from OASiS's own schedule of the
// same jobs (arrival order, EstimatePrices) as the incumbent. Symmetric machines make it hard:
// at the largest size tested (20 jobs, 4 + 4 machines, 12 slots) GLPK often does not close
// the gap within a minute (docs/oasis.md); `upper_bound` then says how far it might be.
//
// Contract: an invalid job (ValidateJob) or one arriving outside [0, T) is never admitted.
// `solved` is true only when GLPK proved optimality; otherwise `plans` hold the best schedule
// found, never worse than OASiS's with estimated prices, and `upper_bound` the best bound.
// Every returned plan, added job by job, passes CheckPlan. Deterministic.
#pragma once

#include <string>
#include <vector>

#include "scheduling/oasis/model.hpp"

namespace troupe::scheduling::oasis {

struct OfflineOptions {
  // <= 0: no limit. A wall-clock limit: a result it cuts short depends on the machine's speed.
  double time_limit_s = 60;
  // > 0: stop once about this many branch-and-bound nodes exist. A count: the result, proved
  // or not, depends only on the input.
  int node_limit = 0;
};

struct OfflineResult {
  bool solved = false;
  std::string status;          // "optimal", "time limit", "node limit", "failed: ..."
  double utility = 0;          // sum of the admitted plans' utilities
  double objective = 0;        // the MILP's objective (== utility when solved)
  double upper_bound = 0;      // no schedule does better (== objective when solved)
  std::vector<bool> admitted;  // one per job
  std::vector<Plan> plans;     // one per job; empty when not admitted; cost 0, payoff = utility
};

OfflineResult SolveOffline(const Cluster& cluster, const std::vector<Job>& jobs,
                           const OfflineOptions& options = {});

}  // namespace troupe::scheduling::oasis
