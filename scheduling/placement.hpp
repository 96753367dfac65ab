// Placement: where a job runs in a round — one part per server it spans, with the GPUs, CPUs and
// memory it leases there. A gang job holds all its parts or none.
#pragma once

#include <absl/container/inlined_vector.h>

#include <cstdint>
#include <vector>

namespace troupe::scheduling {

struct SchedJob;

struct PlacementPart {
  int32_t server = 0;
  int32_t gpus = 0;
  double cpus = 0;
  double memory_gb = 0;
  friend bool operator==(const PlacementPart&, const PlacementPart&) = default;
};

// Most jobs fit one server: their one part is kept inline, not allocated (a round of a large
// cluster places thousands of jobs, each allocation a cache miss on a cold free list).
using PlacementParts = absl::InlinedVector<PlacementPart, 1>;

struct JobPlacement {
  int64_t job_id = 0;
  PlacementParts parts;
  // The job as the mechanism was handed it (null where a placement comes from elsewhere).
  const SchedJob* job = nullptr;
  // job->owner, where the mechanism read it while it read the job: its keeper then finds its
  // entry without reading the job again (null: not read; through `job` then).
  void* owner = nullptr;

  int32_t gpus() const;
  double cpus() const;
  double memory_gb() const;
};

}  // namespace troupe::scheduling
