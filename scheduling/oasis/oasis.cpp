#include "scheduling/oasis/oasis.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "scheduling/oasis/slot_greedy.hpp"
#include "scheduling/oasis/workload_dp.hpp"

namespace troupe::scheduling::oasis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

OasisScheduler::OasisScheduler(Cluster cluster, const PriceParams& params, OasisOptions options)
    : cluster_(std::move(cluster)), book_(cluster_, params), options_(options) {}

double OasisScheduler::CostLowerBound(const Job& job, int work) const {
  const PriceParams& p = book_.params();
  double worker = 0;
  double ps = 0;
  for (int r = 0; r < kResources; ++r) {
    worker += p.worker_low(r) * job.worker[r];
    ps += p.ps_low(r) * job.ps[r];
  }
  return work * worker + job.PsFor(work) * ps;
}

Decision OasisScheduler::Search(const Job& job) const {
  Decision d;
  d.payoff = -kInf;
  const int a = job.arrival;
  const int work = job.WorkerSlots(cluster_.slot_s);
  if (static_cast<double>(work) > static_cast<double>(job.chunks) * (cluster_.slots - a)) {
    d.reason = "needs more worker-slots than N_i workers can give before T";
    return d;
  }
  SlotGreedy greedy(cluster_, book_, job);
  WorkloadDp dp(work);
  const double bound = CostLowerBound(job, work);
  std::vector<double> curve;
  int best_slots = 0;  // slots [a, a + best_slots) of the best end slot
  double best = -kInf;
  for (int t = a; t < cluster_.slots; ++t) {
    const double utility = job.utility.Value(t - a);
    if (options_.prune && t > a && utility - bound <= std::max(best, 0.0)) break;
    greedy.Curve(t, &curve);
    const double cost = dp.Fold(curve);
    ++d.end_slots_examined;
    if (std::isfinite(cost) && utility - cost > best) {
      best = utility - cost;
      best_slots = t - a + 1;
    }
  }
  if (best_slots == 0) {
    d.reason = "no feasible schedule before T";
    return d;
  }
  const std::vector<int> workers =
      dp.Split(best_slots, [&](int i, std::vector<double>* c) { greedy.Curve(a + i, c); });
  for (int i = 0; i < best_slots; ++i) {
    if (workers[i] > 0) d.plan.slots.push_back(greedy.Place(a + i, workers[i]));
  }
  d.plan.end_slot = d.plan.slots.back().slot;
  d.plan.utility = job.utility.Value(d.plan.end_slot - a);
  d.plan.cost = book_.Cost(job, d.plan);
  d.plan.payoff = d.plan.utility - d.plan.cost;
  d.payoff = d.plan.payoff;
  return d;
}

Decision OasisScheduler::Evaluate(const Job& job) const {
  Decision d;
  d.payoff = -kInf;
  if (std::string e = ValidateJob(job); !e.empty()) {
    d.reason = "invalid job: " + e;
    return d;
  }
  if (job.arrival < 0 || job.arrival >= cluster_.slots) {
    d.reason = "arrives outside [0, T)";
    return d;
  }
  d = Search(job);
  if (d.plan.slots.empty()) return d;
  if (!(d.payoff > 0)) {
    d.reason = "payoff " + std::to_string(d.payoff) + " <= 0: utility does not cover the cost";
    return d;
  }
  if (std::string e = CheckPlan(cluster_, job, d.plan, book_.usage()); !e.empty()) {
    d.reason = "internal: plan fails CheckPlan: " + e;
    return d;
  }
  d.admitted = true;
  return d;
}

Decision OasisScheduler::OnArrival(const Job& job) {
  Decision d = Evaluate(job);
  if (d.admitted) {
    book_.Admit(job, d.plan);
    ++admitted_;
    admitted_utility_ += d.plan.utility;
  }
  return d;
}

}  // namespace troupe::scheduling::oasis
