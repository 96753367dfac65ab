// The dynamic program of OASiS (the paper's Alg. 2) that spreads a job's training workload over
// slots. The workload is counted in worker-slots, W = Job::WorkerSlots(): constraint (2) of the
// seed asks sum_t sum_h y_ih(t) >= W (the seed counts data chunks instead, assuming a worker
// trains a whole number of chunks a slot; worker-slots need no such assumption). Folding slots
// a_i, a_i + 1, ... in order, with c_t(y) the cost of y workers in slot t (SlotGreedy::Curve):
//   F_t(w) = min over y in [0, min(w, Y_t)] of F_{t-1}(w - y) + c_t(y),   F_{a_i - 1}(w) = inf
//   except F_{a_i - 1}(0) = 0,
// so F_t(W) is the cheapest way to train W worker-slots in [a_i, t]: the cost of the best
// schedule ending by t, for every candidate end slot t at once. Costs are non-decreasing in y, so
// training more than W never helps and w stops at W.
//
// Contract: Fold() in slot order, then Split(n) for any n <= folded() gives the workers per slot
// of a cheapest schedule over the first n folded slots (empty if F(W) is infinite there); ties
// go to the fewest workers in the later slot, i.e. work as early as possible. Split() needs the
// curves again and recomputes the argmins exactly as Fold() compared them. O(W Y_t) per fold,
// O(W) memory per folded slot.
#pragma once

#include <functional>
#include <vector>

namespace troupe::scheduling::oasis {

class WorkloadDp {
 public:
  explicit WorkloadDp(int work);

  // Adds the next slot, whose y-worker cost is curve[y]; returns F_t(W) (infinite if the folded
  // slots cannot hold W worker-slots).
  double Fold(const std::vector<double>& curve);
  int folded() const { return static_cast<int>(layers_.size()); }
  int work() const { return work_; }

  // Workers per slot (one entry per slot 0..n-1 of those folded); curve_of(i) fills the curve of
  // folded slot i, the same one given to Fold().
  std::vector<int> Split(int n,
                         const std::function<void(int, std::vector<double>*)>& curve_of) const;

 private:
  int work_ = 0;
  std::vector<std::vector<double>> layers_;  // layers_[i][w] = F after folding slot i
  std::vector<int> reach_;                   // the largest finite w of each layer
};

}  // namespace troupe::scheduling::oasis
