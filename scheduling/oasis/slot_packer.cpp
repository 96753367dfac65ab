#include "scheduling/oasis/slot_packer.hpp"

#include <algorithm>

namespace troupe::scheduling::oasis {
namespace {

bool Fits(const double* free, const ResourceVector& demand) {
  for (int r = 0; r < kResources; ++r) {
    if (demand[r] > free[r] + kResourceTolerance * std::max(1.0, demand[r])) return false;
  }
  return true;
}

}  // namespace

PoolTotals Totals(const Cluster& cluster) {
  PoolTotals t;
  for (const Machine& m : cluster.workers) {
    for (int r = 0; r < kResources; ++r) t.worker[r] += m.capacity[r];
  }
  for (const Machine& m : cluster.ps) {
    for (int r = 0; r < kResources; ++r) t.ps[r] += m.capacity[r];
  }
  return t;
}

double DominantShare(const Job& job, double workers, double ps, const PoolTotals& totals) {
  double share = 0;
  for (int r = 0; r < kResources; ++r) {
    if (totals.worker[r] > 0) share = std::max(share, workers * job.worker[r] / totals.worker[r]);
    if (totals.ps[r] > 0) share = std::max(share, ps * job.ps[r] / totals.ps[r]);
  }
  return share;
}

double WorkerShare(const Job& job, const PoolTotals& totals) {
  return DominantShare(job, 1, job.worker_bandwidth() / job.ps_bandwidth(), totals);
}

SlotPacker::SlotPacker(const Cluster& cluster) : cluster_(cluster) {
  for (const Machine& m : cluster.workers) {
    worker_free_.insert(worker_free_.end(), m.capacity.begin(), m.capacity.end());
  }
  for (const Machine& m : cluster.ps) {
    ps_free_.insert(ps_free_.end(), m.capacity.begin(), m.capacity.end());
  }
}

int SlotPacker::FirstFit(bool worker, const ResourceVector& demand) const {
  const std::vector<double>& free = worker ? worker_free_ : ps_free_;
  const size_t machines = free.size() / kResources;
  for (size_t m = 0; m < machines; ++m) {
    if (Fits(&free[m * kResources], demand)) return static_cast<int>(m);
  }
  return -1;
}

void SlotPacker::Take(bool worker, int machine, const ResourceVector& demand, double sign) {
  std::vector<double>& free = worker ? worker_free_ : ps_free_;
  for (int r = 0; r < kResources; ++r) {
    free[static_cast<size_t>(machine) * kResources + r] -= sign * demand[r];
  }
}

void SlotPacker::Count(std::vector<Placement>* list, int machine, int delta) {
  auto it = std::find_if(list->begin(), list->end(),
                         [&](const Placement& p) { return p.machine == machine; });
  if (it == list->end()) {
    list->push_back({machine, delta});
    return;
  }
  it->count += delta;
  if (it->count == 0) list->erase(it);
}

bool SlotPacker::Grow(const Job& job, SlotPlan* plan) {
  const int h = FirstFit(true, job.worker);
  if (h < 0) return false;
  Take(true, h, job.worker, 1);
  const int need = job.PsFor(plan->WorkerCount() + 1) - plan->PsCount();
  std::vector<int> added;
  for (int i = 0; i < need; ++i) {
    const int k = FirstFit(false, job.ps);
    if (k < 0) break;
    Take(false, k, job.ps, 1);
    added.push_back(k);
  }
  if (static_cast<int>(added.size()) < need) {
    Take(true, h, job.worker, -1);
    for (int k : added) Take(false, k, job.ps, -1);
    return false;
  }
  Count(&plan->workers, h, 1);
  for (int k : added) Count(&plan->ps, k, 1);
  return true;
}

int SlotPacker::GrowTo(const Job& job, int target, SlotPlan* plan) {
  while (plan->WorkerCount() < target && Grow(job, plan)) {
  }
  return plan->WorkerCount();
}

}  // namespace troupe::scheduling::oasis
