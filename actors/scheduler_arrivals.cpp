// The scheduler's arrivals (scheduler_internal.hpp): each job the workload hands over is handed
// to the engine, and its actor, if it came with one, kept and watched.
#include <utility>
#include <vector>

#include "actors/scheduler_internal.hpp"

namespace troupe::scheduler_detail {

std::vector<scheduling::Arrival> TakeArrivals(Self* self, std::vector<ArrivedJob>& arrived) {
  std::vector<scheduling::Arrival> arrivals;
  arrivals.reserve(arrived.size());
  for (ArrivedJob& a : arrived) {
    const bool has_actor = static_cast<bool>(a.job);
    if (has_actor) WatchJob(self, a.spec.job_id, std::move(a.job));
    arrivals.push_back(scheduling::Arrival{
        .spec = std::move(a.spec),
        .has_actor = has_actor,
        .iter_time_s = a.iter_time_s,
        .ideal_cpus_per_gpu = a.ideal_cpus_per_gpu,
        .ideal_memory_gb_per_gpu = a.ideal_memory_gb_per_gpu,
        .speedup_at_ideal = a.speedup_at_ideal,
        .sensitivity = std::move(a.sensitivity),
        .traffic = {.gradient_bytes = a.gradient_bytes, .comm_overlap = a.comm_overlap}});
  }
  return arrivals;
}

}  // namespace troupe::scheduler_detail
