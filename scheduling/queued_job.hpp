// QueuedJob: what a placement reads of a job, kept beside the job's place in the queue's order
// (QueueOrder) so that a round reads the head of a long queue without reading each job's entry.
// A large round places thousands of jobs whose entries are scattered over the heap; reading one
// line of each is a wait for memory at nearly every job, where the head's copies lie in a row.
#pragma once

#include <cstdint>

#include "messages/sensitivity.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

struct QueuedJob {
  const SchedJob* job = nullptr;                   // the job these are of
  void* owner = nullptr;                           // job->owner
  const SensitivityMatrix* sensitivity = nullptr;  // job->sensitivity.get()
  double ideal_cpus_per_gpu = 0;
  double ideal_memory_gb_per_gpu = 0;
  int64_t id = 0;
  int32_t gpus = 0;

  bool operator==(const QueuedJob&) const = default;
};

inline QueuedJob QueuedJobOf(const SchedJob& job) {
  return QueuedJob{
      &job,   job.owner, job.sensitivity.get(), job.ideal_cpus_per_gpu, job.ideal_memory_gb_per_gpu,
      job.id, job.gpus};
}

}  // namespace troupe::scheduling
