#include "scheduling/oasis/baselines.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <tuple>

#include "scheduling/oasis/dorm.hpp"

namespace troupe::scheduling::oasis {
namespace {

constexpr double kRrhFloor = 0.01;  // EU must reach 1% of the best utility
constexpr double kRrhMedian = 0.5;  // rho must reach half the admitted median

Admission AdmitIfValid(const Job& job) {
  Admission a;
  if (std::string e = ValidateJob(job); !e.empty()) {
    a.reason = "invalid job: " + e;
    return a;
  }
  a.admitted = true;
  return a;
}

std::vector<int> ActiveJobs(const std::vector<JobProgress>& jobs) {
  std::vector<int> active;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].active() && jobs[i].WorkerCap() > 0) active.push_back(static_cast<int>(i));
  }
  return active;
}

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

}  // namespace

SlotAllocation FillInOrder(const Cluster& cluster, const std::vector<JobProgress>& jobs,
                           const std::vector<int>& order, int t) {
  SlotPacker packer(cluster);
  SlotAllocation out;
  for (int i : order) {
    JobSlot js{i, SlotPlan{t, {}, {}}};
    if (packer.GrowTo(jobs[i].job, jobs[i].WorkerCap(), &js.plan) > 0) out.push_back(std::move(js));
  }
  return out;
}

SlotAllocation DrfFill(const Cluster& cluster, const PoolTotals& totals,
                       const std::vector<JobProgress>& jobs, int t) {
  SlotPacker packer(cluster);
  const std::vector<int> active = ActiveJobs(jobs);
  std::vector<SlotPlan> plans(active.size(), SlotPlan{t, {}, {}});
  using Entry = std::tuple<double, int>;  // dominant share, position in `active`
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (size_t p = 0; p < active.size(); ++p) heap.emplace(0.0, static_cast<int>(p));
  while (!heap.empty()) {
    const int p = std::get<1>(heap.top());
    heap.pop();
    const JobProgress& jp = jobs[active[p]];
    if (!packer.Grow(jp.job, &plans[p])) continue;  // blocked for the rest of the slot
    const int y = plans[p].WorkerCount();
    if (y >= jp.WorkerCap()) continue;
    heap.emplace(DominantShare(jp.job, y, plans[p].PsCount(), totals), p);
  }
  SlotAllocation out;
  for (size_t p = 0; p < active.size(); ++p) {
    if (plans[p].WorkerCount() > 0) out.push_back({active[p], std::move(plans[p])});
  }
  return out;
}

OasisPolicy::OasisPolicy(const Cluster& cluster, const PriceParams& params, OasisOptions options)
    : scheduler_(cluster, params, options) {}

const Plan& OasisPolicy::plan(int index) const {
  static const Plan kNone;
  return index >= 0 && index < static_cast<int>(plans_.size()) ? plans_[index] : kNone;
}

Admission OasisPolicy::Arrive(int index, const std::vector<JobProgress>& jobs) {
  if (plans_.size() < jobs.size()) {
    plans_.resize(jobs.size());
    cursor_.resize(jobs.size(), 0);
  }
  Decision d = scheduler_.OnArrival(jobs[index].job);
  Admission a;
  a.admitted = d.admitted;
  a.reason = d.reason;
  if (d.admitted) {
    a.planned_end = d.plan.end_slot;
    plans_[index] = std::move(d.plan);
    admitted_.push_back(index);
  }
  return a;
}

SlotAllocation OasisPolicy::Slot(int t, const std::vector<JobProgress>& jobs) {
  SlotAllocation out;
  for (int i : admitted_) {
    const std::vector<SlotPlan>& slots = plans_[i].slots;
    size_t& c = cursor_[i];
    while (c < slots.size() && slots[c].slot < t) ++c;
    if (c < slots.size() && slots[c].slot == t && jobs[i].active()) out.push_back({i, slots[c]});
  }
  return out;
}

void OasisPolicy::Finished(int index, int t) {
  if (index < 0 || index >= static_cast<int>(plans_.size())) return;
  std::vector<SlotPlan>& slots = plans_[index].slots;
  while (!slots.empty() && slots.back().slot > t) {
    released_ += slots.back().WorkerCount();
    slots.pop_back();
  }
}

Admission FifoPolicy::Arrive(int index, const std::vector<JobProgress>& jobs) {
  return AdmitIfValid(jobs[index].job);
}

SlotAllocation FifoPolicy::Slot(int t, const std::vector<JobProgress>& jobs) {
  return FillInOrder(cluster_, jobs, ActiveJobs(jobs), t);
}

Admission DrfPolicy::Arrive(int index, const std::vector<JobProgress>& jobs) {
  return AdmitIfValid(jobs[index].job);
}

SlotAllocation DrfPolicy::Slot(int t, const std::vector<JobProgress>& jobs) {
  return DrfFill(cluster_, totals_, jobs, t);
}

Admission RrhPolicy::Arrive(int index, const std::vector<JobProgress>& jobs) {
  const JobProgress& jp = jobs[index];
  Admission a = AdmitIfValid(jp.job);
  if (!a.admitted) return a;
  a.admitted = false;
  int n = 0;
  for (const JobProgress& other : jobs) n += other.active();
  const double u = WorkerShare(jp.job, totals_);
  const double fair = u > 0 ? std::floor(1.0 / ((n + 1) * u)) : jp.job.chunks;
  const int y = std::clamp(static_cast<int>(std::min(fair, 1e9)), 1, jp.job.chunks);
  const int duration = CeilDiv(jp.work, y) - 1;
  if (jp.job.arrival + duration >= cluster_.slots) {
    a.reason = "rrh: cannot finish before T at an equal share";
    return a;
  }
  const double expected = jp.job.utility.Value(duration);
  const double best = jp.job.utility.Value(CeilDiv(jp.work, jp.job.chunks) - 1);
  if (!(expected >= kRrhFloor * best) || !(expected > 0)) {
    a.reason = "rrh: expected utility below 1% of its best";
    return a;
  }
  const double density = expected / (std::max(1, jp.work) * std::max(u, 1e-12));
  if (!admitted_density_.empty()) {
    const double median = admitted_density_[admitted_density_.size() / 2];
    if (density < kRrhMedian * median) {
      a.reason = "rrh: reward density " + std::to_string(density) + " below half the median " +
                 std::to_string(median);
      return a;
    }
  }
  admitted_density_.insert(
      std::upper_bound(admitted_density_.begin(), admitted_density_.end(), density), density);
  a.admitted = true;
  return a;
}

SlotAllocation RrhPolicy::Slot(int t, const std::vector<JobProgress>& jobs) {
  std::vector<int> order = ActiveJobs(jobs);
  std::vector<double> key(jobs.size(), 0.0);
  for (int i : order) {
    const JobProgress& jp = jobs[i];
    const int left = CeilDiv(jp.remaining(), jp.job.chunks) - 1;
    const double at_stake = jp.job.utility.Value(t - jp.job.arrival + left);
    key[i] = at_stake / (jp.remaining() * std::max(WorkerShare(jp.job, totals_), 1e-12));
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key[a] > key[b]; });
  return FillInOrder(cluster_, jobs, order, t);
}

std::unique_ptr<OnlinePolicy> MakePolicy(const std::string& name, const Cluster& cluster,
                                         const PriceParams& params) {
  if (name == "oasis") return std::make_unique<OasisPolicy>(cluster, params);
  if (name == "fifo") return std::make_unique<FifoPolicy>(cluster);
  if (name == "drf") return std::make_unique<DrfPolicy>(cluster);
  if (name == "rrh") return std::make_unique<RrhPolicy>(cluster);
  if (name == "dorm") return std::make_unique<DormPolicy>(cluster);
  return nullptr;
}

}  // namespace troupe::scheduling::oasis
