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

double FtfKey(FtfOrder ftf_order, double now_s, double arrival_s, double remaining_s,
              double ideal_duration_s) {
  const double ideal = std::max(ideal_duration_s, 1e-9);
  const double rho = (now_s - arrival_s + remaining_s) / ideal;
  return ftf_order == FtfOrder::kSmallestFirst ? rho : -rho;
}

double PolicyKey(Policy policy, FtfOrder ftf_order, double now_s, const SchedJob& j) {
  switch (policy) {
    case Policy::kFifo:
      return 0;  // arrival decides
    case Policy::kSrtf:
      return j.remaining_s();
    case Policy::kLas:
      return j.attained_gpu_s;
    case Policy::kFtf:
      return FtfKey(ftf_order, now_s, j.arrival_s, j.remaining_s(), j.ideal_duration_s());
  }
  return 0;
}

double WaitingSince(const SchedJob& job) {
  return job.last_served_s >= 0 ? job.last_served_s : job.arrival_s;
}

bool WaitedTooLong(double now_s, double starvation_s, double waiting_since_s) {
  return now_s - waiting_since_s > starvation_s;
}

std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kFifo:
      return "fifo";
    case Policy::kSrtf:
      return "srtf";
    case Policy::kLas:
      return "las";
    case Policy::kFtf:
      return "ftf";
  }
  return "?";
}

void OrderJobs(Policy policy, double now_s, std::vector<const SchedJob*>& jobs,
               const OrderOptions& options, size_t prefix) {
  const bool any_starving =
      std::any_of(jobs.begin(), jobs.end(), [](const SchedJob* j) { return j->starving; });
  // FIFO's queue is kept in arrival order: usually nothing to do.
  if (policy == Policy::kFifo && !any_starving &&
      std::is_sorted(jobs.begin(), jobs.end(), ByArrival)) {
    return;
  }
  std::vector<Ranked> ranked;
  ranked.reserve(jobs.size());
  for (const SchedJob* j : jobs) {
    ranked.push_back(Ranked{!(any_starving && j->starving),
                            PolicyKey(policy, options.ftf_order, now_s, *j), j->arrival_s, j->id,
                            j});
  }
  const size_t sorted = prefix == 0 ? ranked.size() : std::min(prefix, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + sorted, ranked.end());
  for (size_t i = 0; i < ranked.size(); ++i) jobs[i] = ranked[i].job;
}

void MarkStarving(double now_s, double starvation_s, SchedJob& job) {
  if (starvation_s <= 0 || job.starving) return;
  job.starving = WaitedTooLong(now_s, starvation_s, WaitingSince(job));
}

double ExpectedSpeedup(MechanismKind mechanism, const SchedJob& job,
                       const JobPlacement* placement) {
  if (mechanism == MechanismKind::kProportional) return 1;
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
