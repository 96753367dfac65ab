// JobSpec: one training job as a workload source describes it, before it reaches the cluster.
// Plain data; `inspect` lets CAF serialise it when it crosses processes.
#pragma once

#include <cstdint>
#include <string>

namespace troupe {

struct JobSpec {
  int64_t job_id = 0;
  std::string model;        // a name from the model catalogue
  int32_t gpus = 1;         // fixed for the job's lifetime
  int64_t iterations = 0;   // iterations to train
  double arrival_s = 0;     // virtual seconds from the start of the run
  int64_t source_line = 0;  // line of the trace file it came from; 0 when generated
};
template <class Inspector>
auto inspect(Inspector& f, JobSpec& x) {
  return f(x.job_id, x.model, x.gpus, x.iterations, x.arrival_s, x.source_line);
}

}  // namespace troupe
