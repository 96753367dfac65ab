#include "scheduling/oasis/slot_greedy.hpp"

#include <algorithm>

namespace troupe::scheduling::oasis {

SlotGreedy::SlotGreedy(const Cluster& cluster, const PriceBook& book, const Job& job)
    : cluster_(cluster), book_(book), job_(job) {}

void SlotGreedy::Offers(int slot, bool worker, std::vector<Offer>* offers) const {
  offers->clear();
  const std::vector<Machine>& machines = worker ? cluster_.workers : cluster_.ps;
  const ResourceVector& demand = worker ? job_.worker : job_.ps;
  const Usage& usage = book_.usage();
  for (int m = 0; m < static_cast<int>(machines.size()); ++m) {
    const double* used = worker ? usage.worker_row(slot, m) : usage.ps_row(slot, m);
    const int room = Room(machines[m].capacity, used, demand, job_.chunks);
    if (room <= 0) continue;
    const double unit =
        worker ? book_.WorkerUnitCost(slot, m, demand) : book_.PsUnitCost(slot, m, demand);
    offers->push_back({unit, room, m});
  }
  // Only the cheapest offers matter: every offer has room for at least one chunk and a job takes
  // at most job_.chunks, so the first job_.chunks in (unit, machine) order — the order is total —
  // are all Cumulative and Take ever read, and are the same as a full sort's.
  const auto cheapest =
      offers->begin() +
      std::min<std::ptrdiff_t>(job_.chunks, static_cast<std::ptrdiff_t>(offers->size()));
  std::partial_sort(offers->begin(), cheapest, offers->end(), [](const Offer& a, const Offer& b) {
    return a.unit != b.unit ? a.unit < b.unit : a.machine < b.machine;
  });
  offers->erase(cheapest, offers->end());
}

void SlotGreedy::Cumulative(const std::vector<Offer>& offers, int cap,
                            std::vector<double>* cumulative) {
  cumulative->assign(1, 0.0);
  for (const Offer& o : offers) {
    for (int n = 0; n < o.room; ++n) {
      if (static_cast<int>(cumulative->size()) > cap) return;
      cumulative->push_back(cumulative->back() + o.unit);
    }
  }
}

void SlotGreedy::Curve(int slot, std::vector<double>* cost) {
  Offers(slot, true, &worker_offers_);
  Offers(slot, false, &ps_offers_);
  Cumulative(worker_offers_, job_.chunks, &worker_cost_);
  Cumulative(ps_offers_, job_.chunks, &ps_cost_);
  const int most_ps = static_cast<int>(ps_cost_.size()) - 1;
  cost->clear();
  for (int y = 0; y < static_cast<int>(worker_cost_.size()); ++y) {
    const int z = job_.PsFor(y);
    if (z > most_ps || z > y) break;  // more workers need even more PS
    cost->push_back(worker_cost_[y] + ps_cost_[z]);
  }
}

std::vector<Placement> SlotGreedy::Take(const std::vector<Offer>& offers, int count) {
  std::vector<Placement> taken;
  for (const Offer& o : offers) {
    if (count <= 0) break;
    const int n = std::min(count, o.room);
    taken.push_back({o.machine, n});
    count -= n;
  }
  std::sort(taken.begin(), taken.end(),
            [](const Placement& a, const Placement& b) { return a.machine < b.machine; });
  return taken;
}

SlotPlan SlotGreedy::Place(int slot, int workers) {
  Offers(slot, true, &worker_offers_);
  Offers(slot, false, &ps_offers_);
  SlotPlan plan;
  plan.slot = slot;
  plan.workers = Take(worker_offers_, workers);
  plan.ps = Take(ps_offers_, job_.PsFor(workers));
  return plan;
}

}  // namespace troupe::scheduling::oasis
