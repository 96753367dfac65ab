#include "scheduling/oasis/prices.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace troupe::scheduling::oasis {
namespace {

constexpr double kDefaultLow = 1e-3;
constexpr double kDefaultHigh = 1;

double TotalCapacity(const std::vector<Machine>& machines) {
  double total = 0;
  for (const Machine& m : machines) {
    for (double c : m.capacity) total += c;
  }
  return total;
}

struct PastJob {
  double best = 0;       // f_i at the fastest possible finish
  double log_worst = 0;  // ln f_i finishing in the last slot (-inf if it is 0)
  int work = 0;          // W_i
};

// U^r = max over jobs of best / demand^r; 0 where no job demands r.
ResourceVector HighEstimate(const std::vector<PastJob>& jobs, const std::vector<Job>& past,
                            bool worker) {
  ResourceVector high{};
  for (size_t i = 0; i < jobs.size(); ++i) {
    const ResourceVector& demand = worker ? past[i].worker : past[i].ps;
    for (int r = 0; r < kResources; ++r) {
      if (demand[r] > 0) high[r] = std::max(high[r], jobs[i].best / demand[r]);
    }
  }
  return high;
}

// ln L = min_i ln(worst_i / volume_i) - ln(4 eta), eta = max_i T sum_machines sum_r c / volume_i
// with volume_i = sum_r W_i d_i^r; NaN if no job has a positive worst utility and volume.
double LogLowEstimate(const std::vector<PastJob>& jobs, const std::vector<Job>& past, bool worker,
                      double cluster_volume) {
  double eta = 0;
  double least = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const ResourceVector& demand = worker ? past[i].worker : past[i].ps;
    double volume = 0;
    for (double d : demand) volume += jobs[i].work * d;
    if (volume <= 0) continue;
    eta = std::max(eta, cluster_volume / volume);
    if (std::isfinite(jobs[i].log_worst)) {
      least = std::min(least, jobs[i].log_worst - std::log(volume));
    }
  }
  if (!std::isfinite(least) || eta <= 0) return std::numeric_limits<double>::quiet_NaN();
  return least - std::log(4 * std::max(eta, 1.0));
}

}  // namespace

double PriceParams::Alpha() const {
  double alpha = 1;
  for (int r = 0; r < kResources; ++r) {
    alpha = std::max(alpha, std::log(worker_high[r]) - worker_log_low[r]);
    alpha = std::max(alpha, std::log(ps_high[r]) - ps_log_low[r]);
  }
  return alpha;
}

PriceParams PriceParams::Uniform(double low, double high) {
  PriceParams p;
  p.worker_log_low.fill(std::log(low));
  p.ps_log_low.fill(std::log(low));
  p.worker_high.fill(std::max(low, high));
  p.ps_high.fill(std::max(low, high));
  return p;
}

PriceParams PriceParams::Scaled(double low_factor, double high_factor) const {
  PriceParams p = *this;
  for (int r = 0; r < kResources; ++r) {
    p.worker_log_low[r] += std::log(low_factor);
    p.ps_log_low[r] += std::log(low_factor);
    p.worker_high[r] = std::max(p.worker_low(r), p.worker_high[r] * high_factor);
    p.ps_high[r] = std::max(p.ps_low(r), p.ps_high[r] * high_factor);
  }
  return p;
}

double Price(double log_low, double high, double allocated, double capacity) {
  if (capacity <= 0) return high;
  const double log_high = std::log(high);
  if (log_high <= log_low) return std::exp(log_low);
  return std::exp(log_low + (allocated / capacity) * (log_high - log_low));
}

PriceParams EstimatePrices(const Cluster& cluster, const std::vector<Job>& past) {
  std::vector<PastJob> jobs;
  std::vector<Job> valid;
  for (const Job& job : past) {
    if (!ValidateJob(job).empty()) continue;
    PastJob p;
    p.work = job.WorkerSlots(cluster.slot_s);
    const int fastest = (p.work + job.chunks - 1) / job.chunks;
    p.best = job.utility.Value(std::max(0, fastest - 1));
    const int arrival = std::clamp(job.arrival, 0, std::max(0, cluster.slots - 1));
    p.log_worst = job.utility.LogValue(std::max(0, cluster.slots - 1 - arrival));
    jobs.push_back(p);
    valid.push_back(job);
  }
  const double slots = std::max(1, cluster.slots);
  const double worker_low =
      LogLowEstimate(jobs, valid, true, slots * TotalCapacity(cluster.workers));
  const double ps_low = LogLowEstimate(jobs, valid, false, slots * TotalCapacity(cluster.ps));
  PriceParams p;
  p.worker_log_low.fill(std::isnan(worker_low) ? std::log(kDefaultLow) : worker_low);
  p.ps_log_low.fill(std::isnan(ps_low) ? std::log(kDefaultLow) : ps_low);
  p.worker_high = HighEstimate(jobs, valid, true);
  p.ps_high = HighEstimate(jobs, valid, false);
  for (int r = 0; r < kResources; ++r) {
    if (p.worker_high[r] <= 0) p.worker_high[r] = kDefaultHigh;
    if (p.ps_high[r] <= 0) p.ps_high[r] = kDefaultHigh;
    p.worker_high[r] = std::max(p.worker_high[r], p.worker_low(r));
    p.ps_high[r] = std::max(p.ps_high[r], p.ps_low(r));
  }
  return p;
}

PriceBook::PriceBook(const Cluster& cluster, const PriceParams& params)
    : cluster_(cluster),
      params_(params),
      usage_(cluster),
      workers_(static_cast<int>(cluster.workers.size())),
      ps_machines_(static_cast<int>(cluster.ps.size())),
      worker_price_(static_cast<size_t>(cluster.slots) * workers_ * kResources),
      ps_price_(static_cast<size_t>(cluster.slots) * ps_machines_ * kResources) {
  for (int t = 0; t < cluster.slots; ++t) {
    for (int h = 0; h < workers_; ++h) Reprice(t, h, true);
    for (int k = 0; k < ps_machines_; ++k) Reprice(t, k, false);
  }
}

void PriceBook::Reprice(int slot, int machine, bool worker) {
  const ResourceVector& capacity =
      worker ? cluster_.workers[machine].capacity : cluster_.ps[machine].capacity;
  const double* used = worker ? usage_.worker_row(slot, machine) : usage_.ps_row(slot, machine);
  double* price = worker ? &worker_price_[Index(slot, machine, workers_)]
                         : &ps_price_[Index(slot, machine, ps_machines_)];
  const ResourceVector& low = worker ? params_.worker_log_low : params_.ps_log_low;
  const ResourceVector& high = worker ? params_.worker_high : params_.ps_high;
  for (int r = 0; r < kResources; ++r) price[r] = Price(low[r], high[r], used[r], capacity[r]);
}

double PriceBook::WorkerUnitCost(int slot, int machine, const ResourceVector& demand) const {
  const double* price = &worker_price_[Index(slot, machine, workers_)];
  double cost = 0;
  for (int r = 0; r < kResources; ++r) cost += price[r] * demand[r];
  return cost;
}

double PriceBook::PsUnitCost(int slot, int machine, const ResourceVector& demand) const {
  const double* price = &ps_price_[Index(slot, machine, ps_machines_)];
  double cost = 0;
  for (int r = 0; r < kResources; ++r) cost += price[r] * demand[r];
  return cost;
}

double PriceBook::Cost(const Job& job, const Plan& plan) const {
  double cost = 0;
  for (const SlotPlan& s : plan.slots) {
    for (const Placement& p : s.workers) {
      cost += p.count * WorkerUnitCost(s.slot, p.machine, job.worker);
    }
    for (const Placement& p : s.ps) cost += p.count * PsUnitCost(s.slot, p.machine, job.ps);
  }
  return cost;
}

void PriceBook::Admit(const Job& job, const Plan& plan) {
  usage_.Add(job, plan);
  for (const SlotPlan& s : plan.slots) {
    for (const Placement& p : s.workers) Reprice(s.slot, p.machine, true);
    for (const Placement& p : s.ps) Reprice(s.slot, p.machine, false);
  }
}

}  // namespace troupe::scheduling::oasis
