// Messages between the scheduler and the profiler actor. The scheduler sends the jobs that
// arrived in a round; the profiler answers with each job's estimated sensitivity, its ideal
// demand, what profiling cost, and the virtual time at which the job's profile is ready (when a
// profiling server had finished with it). The job may be scheduled from the first round starting
// at or after that time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages/sensitivity.hpp"

namespace troupe {

struct ProfileAsk {
  int64_t job_id = 0;
  std::string model;
  double arrival_s = 0;
};
template <class Inspector>
auto inspect(Inspector& f, ProfileAsk& x) {
  return f(x.job_id, x.model, x.arrival_s);
}

struct ProfileRequest {
  std::vector<ProfileAsk> asks;
};
template <class Inspector>
auto inspect(Inspector& f, ProfileRequest& x) {
  return f(x.asks);
}

struct JobProfile {
  int64_t job_id = 0;
  SensitivityMatrix estimated;
  double ideal_cpus_per_gpu = 0;
  double ideal_memory_gb_per_gpu = 0;
  double speedup_at_ideal = 1;
  int32_t points_profiled = 0;
  double profiling_s = 0;
  double ready_at_s = 0;
};
template <class Inspector>
auto inspect(Inspector& f, JobProfile& x) {
  return f(x.job_id, x.estimated, x.ideal_cpus_per_gpu, x.ideal_memory_gb_per_gpu,
           x.speedup_at_ideal, x.points_profiled, x.profiling_s, x.ready_at_s);
}

struct ProfileBatch {
  std::vector<JobProfile> profiles;
};
template <class Inspector>
auto inspect(Inspector& f, ProfileBatch& x) {
  return f(x.profiles);
}

}  // namespace troupe
