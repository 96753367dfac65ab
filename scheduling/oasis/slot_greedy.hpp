// The per-slot subproblem of OASiS (the paper's problem (32), its Alg. 3 and Theorem 1): given how
// many workers job i runs in slot t, place them and the parameter servers they need at the least
// cost at the current prices. A worker on server h costs sum_r p_h^r(t) w_i^r and h holds at
// most min_r floor((c_h^r - g_h^r(t)) / w_i^r) more of them; likewise for PS machines. With y
// workers the job needs z = ceil(b_i y / B_i) parameter servers ((6); z <= y, (7), holds since
// b_i <= B_i), and more of either only costs more. Filling the cheapest servers first is optimal
// for each kind on its own, and the two kinds share no resource, so the greedy is optimal.
//
// Contract: Curve(t) gives cost[y] for y = 0, 1, ... up to the most workers slot t can take
// (capped at N_i, and at the PS capacity for their parameter servers); cost is non-decreasing
// and cost[0] = 0. Place(t, y) returns the placement whose cost is Curve(t)[y]. Ties between
// servers of equal unit cost go to the lower index. Deterministic; reads the PriceBook only.
#pragma once

#include <vector>

#include "scheduling/oasis/model.hpp"
#include "scheduling/oasis/prices.hpp"

namespace troupe::scheduling::oasis {

class SlotGreedy {
 public:
  SlotGreedy(const Cluster& cluster, const PriceBook& book, const Job& job);

  void Curve(int slot, std::vector<double>* cost);
  SlotPlan Place(int slot, int workers);

 private:
  struct Offer {
    double unit = 0;  // cost of one more worker (PS) on the machine
    int room = 0;     // how many more fit
    int machine = 0;
  };
  // The machines with room in `slot`, cheapest first.
  void Offers(int slot, bool worker, std::vector<Offer>* offers) const;
  // cumulative[n] = cost of the n cheapest units, n up to min(cap, total room).
  static void Cumulative(const std::vector<Offer>& offers, int cap,
                         std::vector<double>* cumulative);
  // The cheapest `count` units as placements, by machine index.
  static std::vector<Placement> Take(const std::vector<Offer>& offers, int count);

  const Cluster& cluster_;
  const PriceBook& book_;
  const Job& job_;
  std::vector<Offer> worker_offers_, ps_offers_;
  std::vector<double> worker_cost_, ps_cost_;
};

}  // namespace troupe::scheduling::oasis
