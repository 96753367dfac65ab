// OASiS (the paper's Alg. 1): online admission and scheduling of parameter-server training jobs.
// On job i's arrival at a_i, for every candidate end slot t_hat in [a_i, T) the workload DP
// (workload_dp.hpp) spreads W_i worker-slots over [a_i, t_hat], each slot's workers and
// parameter servers placed by the per-slot greedy (slot_greedy.hpp) at the current prices; the
// payoff of t_hat is mu = f_i(t_hat - a_i) - F_{t_hat}(W_i). The best t_hat wins (ties: the
// earliest); the job is admitted iff mu > 0, and then its resources are allocated and the prices
// of the touched cells rise (prices.hpp). A job is never preempted or re-planned.
//
// The plan returned is that of the best t_hat; its real end slot (the last one holding workers)
// can be earlier, and its payoff is recomputed from the placements at the current prices. Since
// every F_{t}(W_i) is the exact optimum over schedules ending by t and f_i is non-increasing, the
// payoff equals the best payoff over all feasible schedules of the job (tests/unit/
// oasis_bruteforce_test.cpp checks this by enumeration).
//
// Pruning (OasisOptions::prune, on by default): end slots are examined in order and the search
// stops once f_i(t - a_i) minus a lower bound on any schedule's cost (W_i worker-slots and
// ceil(b_i W_i / B_i) PS-slots at the floor prices L) cannot exceed max(best payoff so far, 0).
// The admission decision and an admitted job's plan are unchanged by it; a rejected job's
// reported payoff is then the best over the end slots examined.
//
// Contract: Evaluate() is const and OnArrival() = Evaluate() + admit; every admitted plan passes
// CheckPlan() against the usage before it (checked, and a failure rejects the job with an
// "internal" reason). Deterministic. Not thread-safe.
#pragma once

#include <string>

#include "scheduling/oasis/model.hpp"
#include "scheduling/oasis/prices.hpp"

namespace troupe::scheduling::oasis {

struct OasisOptions {
  bool prune = true;
};

struct Decision {
  bool admitted = false;
  Plan plan;           // the best plan found, also for a rejected job; empty if none is feasible
  double payoff = 0;   // plan.payoff, or -infinity when no plan is feasible
  std::string reason;  // why the job was rejected; "" when admitted
  int end_slots_examined = 0;
};

class OasisScheduler {
 public:
  OasisScheduler(Cluster cluster, const PriceParams& params, OasisOptions options = {});

  Decision OnArrival(const Job& job);
  Decision Evaluate(const Job& job) const;

  const Cluster& cluster() const { return cluster_; }
  const PriceBook& prices() const { return book_; }
  int admitted() const { return admitted_; }
  double admitted_utility() const { return admitted_utility_; }

 private:
  // W_i worker-slots and ceil(b_i W_i / B_i) PS-slots at the floor prices.
  double CostLowerBound(const Job& job, int work) const;
  // The best plan over end slots [a_i, T) (Decision without the admission verdict).
  Decision Search(const Job& job) const;

  Cluster cluster_;
  PriceBook book_;
  OasisOptions options_;
  int admitted_ = 0;
  double admitted_utility_ = 0;
};

}  // namespace troupe::scheduling::oasis
