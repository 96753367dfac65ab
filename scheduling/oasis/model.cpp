#include "scheduling/oasis/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace troupe::scheduling::oasis {
namespace {

// ceil(x) that ignores rounding noise just above an integer.
int64_t CeilTolerant(double x) {
  return static_cast<int64_t>(std::ceil(x - kResourceTolerance * std::max(1.0, std::abs(x))));
}

std::string Where(const char* what, int slot, int machine, Resource r) {
  return std::string(what) + " capacity exceeded: slot " + std::to_string(slot) + ", machine " +
         std::to_string(machine) + ", " + std::string(ResourceName(r));
}

// Structure of the plan: slots in range and increasing, valid machines, positive counts, no
// machine listed twice in a slot, end_slot the last slot.
std::string CheckStructure(const Cluster& cluster, const Job& job, const Plan& plan) {
  if (plan.slots.empty()) return "empty plan";
  int previous = -1;
  for (const SlotPlan& s : plan.slots) {
    if (s.slot < job.arrival || s.slot >= cluster.slots) {
      return "slot " + std::to_string(s.slot) + " outside [arrival, T)";
    }
    if (s.slot <= previous) return "slots not increasing at " + std::to_string(s.slot);
    previous = s.slot;
    if (s.WorkerCount() <= 0) return "slot " + std::to_string(s.slot) + " holds no worker";
    for (const auto* list : {&s.workers, &s.ps}) {
      const int machines =
          static_cast<int>(list == &s.workers ? cluster.workers.size() : cluster.ps.size());
      std::set<int> seen;
      for (const Placement& p : *list) {
        if (p.machine < 0 || p.machine >= machines || p.count <= 0 ||
            !seen.insert(p.machine).second) {
          return "bad placement in slot " + std::to_string(s.slot);
        }
      }
    }
  }
  if (plan.end_slot != previous) return "end_slot is not the last slot";
  return "";
}

// Capacities (4) and (5) of one slot.
std::string CheckCapacities(const Cluster& cluster, const Job& job, const SlotPlan& s,
                            const Usage& before) {
  for (const Placement& p : s.workers) {
    for (int r = 0; r < kResources; ++r) {
      const auto res = static_cast<Resource>(r);
      const double used = before.worker(s.slot, p.machine, res) + p.count * job.worker[r];
      if (!FitsCapacity(used, cluster.workers[p.machine].capacity[r])) {
        return Where("(4) worker", s.slot, p.machine, res);
      }
    }
  }
  for (const Placement& p : s.ps) {
    for (int r = 0; r < kResources; ++r) {
      const auto res = static_cast<Resource>(r);
      const double used = before.ps(s.slot, p.machine, res) + p.count * job.ps[r];
      if (!FitsCapacity(used, cluster.ps[p.machine].capacity[r])) {
        return Where("(5) PS", s.slot, p.machine, res);
      }
    }
  }
  return "";
}

}  // namespace

std::string_view ResourceName(Resource r) {
  switch (r) {
    case Resource::kGpu:
      return "gpu";
    case Resource::kCpu:
      return "cpu";
    case Resource::kMemory:
      return "memory";
    case Resource::kStorage:
      return "storage";
    case Resource::kBandwidth:
      return "bandwidth";
  }
  return "?";
}

double Utility::Value(int duration) const {
  const double d = duration;
  switch (kind) {
    case UtilityKind::kSigmoid:
      return g1 / (1 + std::exp(g2 * (d - g3)));
    case UtilityKind::kLinear:
      return std::max(0.0, g1 - g2 * d);
    case UtilityKind::kStep:
      return d <= g3 ? g1 : 0.0;
  }
  return 0;
}

double Utility::LogValue(int duration) const {
  if (kind != UtilityKind::kSigmoid || g1 <= 0) return std::log(Value(duration));
  // ln g1 - ln(1 + e^z), with ln(1 + e^z) = z + ln(1 + e^-z) for z > 0 (no overflow).
  const double z = g2 * (static_cast<double>(duration) - g3);
  return std::log(g1) - (z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)));
}

double Job::StepSeconds() const { return minibatch_s + 2 * gradient / worker_bandwidth(); }

double Job::Minibatches() const {
  return static_cast<double>(epochs) * chunks * minibatches_per_chunk;
}

int Job::WorkerSlots(double slot_s) const {
  return static_cast<int>(CeilTolerant(Minibatches() * StepSeconds() / slot_s));
}

int Job::PsFor(int workers) const {
  return static_cast<int>(CeilTolerant(worker_bandwidth() * workers / ps_bandwidth()));
}

std::string ValidateJob(const Job& job) {
  if (job.epochs <= 0 || job.chunks <= 0 || job.minibatches_per_chunk <= 0) {
    return "epochs, chunks and mini-batches per chunk must be positive";
  }
  if (!(job.minibatch_s >= 0) || !(job.gradient >= 0)) return "negative time or gradient size";
  if (!(job.minibatch_s + job.gradient > 0)) return "a mini-batch must take time";
  if (!(job.worker_bandwidth() > 0) || !(job.ps_bandwidth() > 0)) {
    return "worker and PS bandwidth must be positive";
  }
  if (job.PsFor(1) > 1) return "worker bandwidth above PS bandwidth: (6) and (7) conflict";
  for (int r = 0; r < kResources; ++r) {
    if (!(job.worker[r] >= 0) || !(job.ps[r] >= 0)) return "negative demand";
  }
  const Utility& u = job.utility;
  if (!(u.g1 >= 0) || !(u.g2 >= 0)) return "utility must be non-negative and non-increasing";
  return "";
}

int SlotPlan::WorkerCount() const {
  int n = 0;
  for (const Placement& p : workers) n += p.count;
  return n;
}

int SlotPlan::PsCount() const {
  int n = 0;
  for (const Placement& p : ps) n += p.count;
  return n;
}

int Plan::WorkerSlots() const {
  int n = 0;
  for (const SlotPlan& s : slots) n += s.WorkerCount();
  return n;
}

Usage::Usage(const Cluster& cluster)
    : slots_(cluster.slots),
      workers_(static_cast<int>(cluster.workers.size())),
      ps_machines_(static_cast<int>(cluster.ps.size())),
      worker_(static_cast<size_t>(slots_) * workers_ * kResources, 0.0),
      ps_(static_cast<size_t>(slots_) * ps_machines_ * kResources, 0.0) {}

void Usage::Add(const Job& job, const Plan& plan) {
  for (const SlotPlan& s : plan.slots) {
    for (const Placement& p : s.workers) {
      for (int r = 0; r < kResources; ++r) {
        worker_[Index(s.slot, p.machine, static_cast<Resource>(r))] += p.count * job.worker[r];
      }
    }
    for (const Placement& p : s.ps) {
      for (int r = 0; r < kResources; ++r) {
        ps_[PsIndex(s.slot, p.machine, static_cast<Resource>(r))] += p.count * job.ps[r];
      }
    }
  }
}

int Room(const ResourceVector& capacity, const double* used, const ResourceVector& demand,
         int cap) {
  double room = cap;
  for (int r = 0; r < kResources; ++r) {
    if (demand[r] <= 0) continue;
    const double free = capacity[r] - used[r];
    room = std::min(room, std::floor(free / demand[r] + kResourceTolerance));
  }
  return std::max(0, static_cast<int>(room));
}

std::string CheckPlan(const Cluster& cluster, const Job& job, const Plan& plan,
                      const Usage& before) {
  if (std::string e = CheckStructure(cluster, job, plan); !e.empty()) return e;
  for (const SlotPlan& s : plan.slots) {
    const int workers = s.WorkerCount();
    const int ps = s.PsCount();
    const std::string at = " in slot " + std::to_string(s.slot);
    if (workers > job.chunks) return "(3) more workers than data chunks" + at;
    if (ps > workers) return "(7) more parameter servers than workers" + at;
    if (!FitsCapacity(job.worker_bandwidth() * workers, job.ps_bandwidth() * ps)) {
      return "(6) PS bandwidth below worker bandwidth" + at;
    }
    if (std::string e = CheckCapacities(cluster, job, s, before); !e.empty()) return e;
  }
  const double trained = plan.WorkerSlots() * cluster.slot_s / job.StepSeconds();
  if (plan.WorkerSlots() < job.WorkerSlots(cluster.slot_s) ||
      !FitsCapacity(job.Minibatches(), trained)) {
    return "(2) too few worker-slots for E N M mini-batches";
  }
  return "";
}

}  // namespace troupe::scheduling::oasis
