#include "scheduling/policy.hpp"

#include <algorithm>
#include <cstddef>
#include <tuple>

namespace troupe::scheduling {
namespace {

bool ByArrival(const SchedJob* a, const SchedJob* b) {
  return std::tie(a->arrival_s, a->id) < std::tie(b->arrival_s, b->id);
}

struct Ranked {
  bool not_starving;
  double key;
  double arrival_s;
  int64_t id;
  const SchedJob* job;
  bool operator<(const Ranked& o) const {
    return std::tie(not_starving, key, arrival_s, id) <
           std::tie(o.not_starving, o.key, o.arrival_s, o.id);
  }
};

}  // namespace

double WaitingSince(const SchedJob& job) {
  return job.last_served_s >= 0 ? job.last_served_s : job.arrival_s;
}

bool WaitedTooLong(double now_s, double starvation_s, double waiting_since_s) {
  return now_s - waiting_since_s > starvation_s;
}

void OrderJobs(const PolicyDefinition& policy, double now_s, std::vector<const SchedJob*>& jobs,
               const OrderOptions& options, size_t prefix) {
  const bool any_starving =
      policy.starving_first &&
      std::any_of(jobs.begin(), jobs.end(), [](const SchedJob* j) { return j->starving; });
  // A constant key (FIFO): a queue kept in arrival order usually needs nothing done.
  if (policy.constant_key && !any_starving && std::is_sorted(jobs.begin(), jobs.end(), ByArrival)) {
    return;
  }
  std::vector<Ranked> ranked;
  ranked.reserve(jobs.size());
  for (const SchedJob* j : jobs) {
    ranked.push_back(Ranked{!(any_starving && j->starving), policy.key(*j, now_s, options),
                            j->arrival_s, j->id, j});
  }
  const size_t sorted = prefix == 0 ? ranked.size() : std::min(prefix, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + sorted, ranked.end());
  for (size_t i = 0; i < ranked.size(); ++i) jobs[i] = ranked[i].job;
}

void MarkStarving(double now_s, double starvation_s, SchedJob& job) {
  if (starvation_s <= 0 || job.starving) return;
  job.starving = WaitedTooLong(now_s, starvation_s, WaitingSince(job));
}

double ExpectedSpeedup(bool share_only, const SchedJob& job, const JobPlacement* placement) {
  if (share_only) return 1;
  if (placement == nullptr || placement->gpus() <= 0) return job.speedup_at_ideal;
  constexpr double kSlack = 1e-9;
  const double gpus = placement->gpus();
  const double cpus = placement->cpus() / gpus;
  const double memory_gb = placement->memory_gb() / gpus;
  if (cpus + kSlack >= job.ideal_cpus_per_gpu &&
      memory_gb + kSlack >= job.ideal_memory_gb_per_gpu) {
    return job.speedup_at_ideal;
  }
  return job.sensitivity ? job.sensitivity->At(cpus, memory_gb) : 1;
}

}  // namespace troupe::scheduling
