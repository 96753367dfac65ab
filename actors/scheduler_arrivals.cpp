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
    arrivals.push_back(scheduling::Arrival{std::move(a.spec), has_actor, a.iter_time_s,
                                           a.ideal_cpus_per_gpu, a.ideal_memory_gb_per_gpu,
                                           a.speedup_at_ideal, std::move(a.sensitivity)});
  }
  return arrivals;
}

}  // namespace troupe::scheduler_detail
