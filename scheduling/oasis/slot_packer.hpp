// Helpers the baseline policies (baselines.hpp, dorm.hpp) share: dominant shares over the two
// machine pools, and a first-fit packer that adds workers one at a time within one slot.
//
// Shares. The worker servers and the PS machines are two pools; a resource of a pool is one
// dimension (10 in all, those with no capacity skipped). The dominant share of a job holding y
// workers and z PS is max over dimensions of its amount / the pool's total. WorkerShare() is the
// dominant share of one worker together with the b_i / B_i parameter servers it needs, the unit
// the baselines count fairness and resource volume in.
//
// Packing. SlotPacker tracks the free capacity of every machine in one slot. Grow() adds one
// worker of a job on the lowest-indexed worker server with room, then the parameter servers the
// new worker count needs (ceil(b_i y / B_i), constraint (6); never more than y, (7)) on the
// lowest-indexed PS machines with room; if either does not fit nothing changes. The result
// keeps (3) only if the caller caps y at N_i.
//
// Contract: deterministic; Grow() never exceeds a capacity.
#pragma once

#include <vector>

#include "scheduling/oasis/model.hpp"

namespace troupe::scheduling::oasis {

struct PoolTotals {
  ResourceVector worker{};  // summed capacity of the worker servers
  ResourceVector ps{};      // summed capacity of the PS machines
};
PoolTotals Totals(const Cluster& cluster);

// The dominant share of `workers` workers and `ps` parameter servers of `job`.
double DominantShare(const Job& job, double workers, double ps, const PoolTotals& totals);
// The dominant share of one worker with its b_i / B_i parameter servers (> 0 for a valid job that
// demands anything).
double WorkerShare(const Job& job, const PoolTotals& totals);

class SlotPacker {
 public:
  explicit SlotPacker(const Cluster& cluster);

  // One more worker (and the PS it needs) for `job` in `plan`; false and no change if it does not
  // fit.
  bool Grow(const Job& job, SlotPlan* plan);
  // Grows `plan` until it holds `target` workers or nothing fits; the worker count reached.
  int GrowTo(const Job& job, int target, SlotPlan* plan);

 private:
  // The lowest-indexed machine of the pool with room for one unit of `demand`, or -1.
  int FirstFit(bool worker, const ResourceVector& demand) const;
  void Take(bool worker, int machine, const ResourceVector& demand, double sign);
  static void Count(std::vector<Placement>* list, int machine, int delta);

  const Cluster& cluster_;
  std::vector<double> worker_free_;
  std::vector<double> ps_free_;
};

}  // namespace troupe::scheduling::oasis
