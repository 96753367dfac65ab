// Online policies for the slot simulator (slot_simulator.hpp): OASiS itself and the paper's
// baselines FIFO, DRF and RRH (Dorm is in dorm.hpp). All schedule over the same model (model.hpp):
// a job's workers each need w_i, its parameter servers s_i, with ceil(b_i y / B_i) PS for y
// workers ((6), (7)) and at most min(N_i, remaining worker-slots) workers a slot ((3)); workers
// and PS are placed first-fit by SlotPacker (slot_packer.hpp).
//
//   OASiS  admission by payoff and a whole plan per job at arrival (oasis.hpp); each slot runs
//          the plan's slot. Never changes a plan; a job that finishes early frees nothing it was
//          planned (its plan ends where its work does).
//   FIFO   admits every valid job; each slot the active jobs, in arrival order, each take as many
//          workers (with their PS) as fit, up to their cap.
//   DRF    admits every valid job; each slot progressive filling: one worker (with the PS it
//          needs) at a time to the job of the smallest dominant share (slot_packer.hpp) that can
//          still grow, until no job can.
//   RRH    risk-reward heuristic. On arrival with n jobs active, the job's expected concurrency
//          is an equal share of the cluster, y = clamp(floor(1 / ((n + 1) u_i)), 1, N_i) with
//          u_i = WorkerShare(); its expected duration d = ceil(W_i / y) - 1 and expected utility
//          EU = f_i(d); its reward density rho = EU / (W_i u_i), utility per unit of dominant
//          resource volume. Rule: admit iff a_i + d < T, EU >= 1% of its best utility
//          f_i(ceil(W_i / N_i) - 1), and rho >= 0.5 x the median rho of the jobs admitted so far
//          (no median yet: no such bound). Each slot the active jobs take as many workers as fit
//          in decreasing order of f_i(t - a_i + ceil(remaining / N_i) - 1) / (remaining u_i),
//          the utility still at stake per unit of volume left (ties: arrival order).
//
// Contract: invalid jobs (ValidateJob) are rejected with the reason by every policy; no policy
// ever returns an allocation that breaks a capacity or (3), (6), (7). Deterministic.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "scheduling/oasis/oasis.hpp"
#include "scheduling/oasis/slot_packer.hpp"
#include "scheduling/oasis/slot_simulator.hpp"

namespace troupe::scheduling::oasis {

// Each job of `order` (indices of active jobs) takes as many workers as fit, up to its cap.
SlotAllocation FillInOrder(const Cluster& cluster, const std::vector<JobProgress>& jobs,
                           const std::vector<int>& order, int t);
// DRF's progressive filling of slot t over the active jobs.
SlotAllocation DrfFill(const Cluster& cluster, const PoolTotals& totals,
                       const std::vector<JobProgress>& jobs, int t);

class OasisPolicy : public OnlinePolicy {
 public:
  OasisPolicy(const Cluster& cluster, const PriceParams& params, OasisOptions options = {});
  std::string_view name() const override { return "oasis"; }
  Admission Arrive(int index, const std::vector<JobProgress>& jobs) override;
  SlotAllocation Slot(int t, const std::vector<JobProgress>& jobs) override;
  // Drops the plan's slots after t (their reservations stay in the price book, which has no
  // release; docs/oasis.md).
  void Finished(int index, int t) override;

  const OasisScheduler& scheduler() const { return scheduler_; }
  // Worker-slots planned after the jobs finished, dropped by Finished().
  int released_worker_slots() const { return released_; }
  // The admitted job's plan (empty for others).
  const Plan& plan(int index) const;

 private:
  OasisScheduler scheduler_;
  std::vector<Plan> plans_;     // by job index
  std::vector<size_t> cursor_;  // next slot of each plan
  std::vector<int> admitted_;   // indices of admitted jobs
  int released_ = 0;
};

class FifoPolicy : public OnlinePolicy {
 public:
  explicit FifoPolicy(const Cluster& cluster) : cluster_(cluster) {}
  std::string_view name() const override { return "fifo"; }
  Admission Arrive(int index, const std::vector<JobProgress>& jobs) override;
  SlotAllocation Slot(int t, const std::vector<JobProgress>& jobs) override;

 private:
  Cluster cluster_;
};

class DrfPolicy : public OnlinePolicy {
 public:
  explicit DrfPolicy(const Cluster& cluster) : cluster_(cluster), totals_(Totals(cluster)) {}
  std::string_view name() const override { return "drf"; }
  Admission Arrive(int index, const std::vector<JobProgress>& jobs) override;
  SlotAllocation Slot(int t, const std::vector<JobProgress>& jobs) override;

 private:
  Cluster cluster_;
  PoolTotals totals_;
};

class RrhPolicy : public OnlinePolicy {
 public:
  explicit RrhPolicy(const Cluster& cluster) : cluster_(cluster), totals_(Totals(cluster)) {}
  std::string_view name() const override { return "rrh"; }
  Admission Arrive(int index, const std::vector<JobProgress>& jobs) override;
  SlotAllocation Slot(int t, const std::vector<JobProgress>& jobs) override;

 private:
  Cluster cluster_;
  PoolTotals totals_;
  std::vector<double> admitted_density_;  // sorted
};

// "oasis" (with `params`), "fifo", "drf", "rrh" or "dorm"; nullptr for another name.
std::unique_ptr<OnlinePolicy> MakePolicy(const std::string& name, const Cluster& cluster,
                                         const PriceParams& params);

}  // namespace troupe::scheduling::oasis
