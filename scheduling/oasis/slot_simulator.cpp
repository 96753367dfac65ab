#include "scheduling/oasis/slot_simulator.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace troupe::scheduling::oasis {
namespace {

// "" if the placements are valid and fit on top of `used`.
std::string CheckPlacements(const std::vector<Machine>& machines, const ResourceVector& demand,
                            const std::vector<Placement>& list, const std::vector<double>& used,
                            const char* kind) {
  std::set<int> seen;
  for (const Placement& p : list) {
    if (p.machine < 0 || p.machine >= static_cast<int>(machines.size()) || p.count <= 0 ||
        !seen.insert(p.machine).second) {
      return std::string("bad ") + kind + " placement";
    }
    for (int r = 0; r < kResources; ++r) {
      const double total =
          used[static_cast<size_t>(p.machine) * kResources + r] + p.count * demand[r];
      if (!FitsCapacity(total, machines[p.machine].capacity[r])) {
        return std::string(kind) + " capacity exceeded on machine " + std::to_string(p.machine) +
               ", " + std::string(ResourceName(static_cast<Resource>(r)));
      }
    }
  }
  return "";
}

void AddPlacements(const ResourceVector& demand, const std::vector<Placement>& list,
                   std::vector<double>* used) {
  for (const Placement& p : list) {
    for (int r = 0; r < kResources; ++r) {
      (*used)[static_cast<size_t>(p.machine) * kResources + r] += p.count * demand[r];
    }
  }
}

ResourceVector Totals(const std::vector<Machine>& machines) {
  ResourceVector total{};
  for (const Machine& m : machines) {
    for (int r = 0; r < kResources; ++r) total[r] += m.capacity[r];
  }
  return total;
}

// used summed over machines, divided by the total capacity (0 where there is none).
ResourceVector Share(const std::vector<double>& used, const ResourceVector& total) {
  ResourceVector share{};
  for (size_t i = 0; i < used.size(); ++i) share[i % kResources] += used[i];
  for (int r = 0; r < kResources; ++r) share[r] = total[r] > 0 ? share[r] / total[r] : 0;
  return share;
}

// Offers the jobs arriving in slot t to the policy.
void Arrivals(int t, const std::vector<Job>& jobs, size_t* next, std::vector<JobProgress>* state,
              OnlinePolicy& policy, SimResult* result) {
  while (*next < jobs.size() && jobs[*next].arrival <= t) {
    const int i = static_cast<int>((*next)++);
    JobOutcome& out = result->jobs[i];
    if (jobs[i].arrival < t) {  // before slot 0, or out of order
      out.reason = "arrives outside [0, T) or out of order";
      continue;
    }
    (*state)[i].arrived = true;
    const Admission a = policy.Arrive(i, *state);
    (*state)[i].admitted = a.admitted;
    out.admitted = a.admitted;
    out.reason = a.admitted ? "" : (a.reason.empty() ? "rejected" : a.reason);
    out.planned_end = a.planned_end;
    result->admitted += a.admitted;
  }
}

}  // namespace

int JobProgress::WorkerCap() const { return std::max(0, std::min(job.chunks, remaining())); }

std::string CheckSlot(const Cluster& cluster, const Job& job, int t, const SlotPlan& s,
                      const std::vector<double>& worker_used, const std::vector<double>& ps_used) {
  if (s.slot != t)
    return "allocation for slot " + std::to_string(s.slot) + " given in " + std::to_string(t);
  const int workers = s.WorkerCount();
  const int ps = s.PsCount();
  if (workers > job.chunks) return "(3) more workers than data chunks";
  if (ps > workers) return "(7) more parameter servers than workers";
  if (!FitsCapacity(job.worker_bandwidth() * workers, job.ps_bandwidth() * ps)) {
    return "(6) PS bandwidth below worker bandwidth";
  }
  if (auto e = CheckPlacements(cluster.workers, job.worker, s.workers, worker_used, "(4) worker");
      !e.empty()) {
    return e;
  }
  return CheckPlacements(cluster.ps, job.ps, s.ps, ps_used, "(5) PS");
}

SlotUsage::SlotUsage(const Cluster& cluster)
    : cluster_(cluster),
      worker_used_(cluster.workers.size() * kResources, 0.0),
      ps_used_(cluster.ps.size() * kResources, 0.0) {}

std::string SlotUsage::Add(const Job& job, int t, const SlotPlan& s) {
  std::string e = CheckSlot(cluster_, job, t, s, worker_used_, ps_used_);
  if (!e.empty()) return e;
  AddPlacements(job.worker, s.workers, &worker_used_);
  AddPlacements(job.ps, s.ps, &ps_used_);
  return "";
}

ResourceVector SlotUsage::WorkerUse() const {
  return Share(worker_used_, Totals(cluster_.workers));
}
ResourceVector SlotUsage::PsUse() const { return Share(ps_used_, Totals(cluster_.ps)); }

SimResult Simulate(const Cluster& cluster, const std::vector<Job>& jobs, OnlinePolicy& policy) {
  SimResult result;
  result.policy = std::string(policy.name());
  result.jobs.resize(jobs.size());
  std::vector<JobProgress> state(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    state[i].job = jobs[i];
    state[i].work = jobs[i].WorkerSlots(cluster.slot_s);
    result.jobs[i].id = jobs[i].id;
    result.jobs[i].arrival = jobs[i].arrival;
  }
  size_t next = 0;
  for (int t = 0; t < cluster.slots; ++t) {
    Arrivals(t, jobs, &next, &state, policy, &result);
    SlotRecord record;
    for (const JobProgress& p : state) record.active += p.active();
    SlotUsage usage(cluster);
    std::vector<bool> seen(jobs.size(), false);
    for (const JobSlot& js : policy.Slot(t, state)) {
      const bool known = js.job >= 0 && js.job < static_cast<int>(jobs.size());
      std::string e = !known || !state[js.job].active() ? "job not active"
                      : seen[js.job]                    ? "job allocated twice"
                                                        : usage.Add(jobs[js.job], t, js.plan);
      if (!e.empty()) {
        result.violations.push_back(result.policy + " slot " + std::to_string(t) + " job " +
                                    std::to_string(js.job) + ": " + e);
        continue;
      }
      seen[js.job] = true;
      JobProgress& p = state[js.job];
      const int workers = js.plan.WorkerCount();
      record.workers += workers;
      record.ps += js.plan.PsCount();
      p.done += workers;
      result.jobs[js.job].worker_slots += workers;
      if (p.done >= p.work) {
        p.completion = t;
        JobOutcome& out = result.jobs[js.job];
        out.completion = t;
        out.utility = p.job.utility.Value(t - p.job.arrival);
        result.total_utility += out.utility;
        ++result.finished;
        policy.Finished(js.job, t);
      }
    }
    record.worker_use = usage.WorkerUse();
    record.ps_use = usage.PsUse();
    result.slots.push_back(record);
  }
  for (size_t i = next; i < jobs.size(); ++i) result.jobs[i].reason = "arrives outside [0, T)";
  return result;
}

}  // namespace troupe::scheduling::oasis
