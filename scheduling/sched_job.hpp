// SchedJob: what the scheduler knows of a job when it plans a round. Plain data; the job actor
// holds the truth (iterations left) and reports it at the end of every lease.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "messages/sensitivity.hpp"

namespace troupe::scheduling {

// The fields are grouped by the pass of a round that reads them, so that a job's entry in a
// large round costs one cache line a pass: first what a round leaves alone, then what a placement
// and the order read (id, size, ideal, matrix, expected speed-up), then what the round's run
// writes. The scheduler's entry for a job (TrackedJob) lines these groups up with the lines of its
// block.
struct SchedJob {
  // Its throughput on each GPU type of the run (by ServerShape::gpu_type) relative to the
  // reference type the catalogue's iteration times were measured on. Null: 1 on every type (a
  // cluster that names no GPU type).
  std::shared_ptr<const std::vector<double>> type_speed;
  double arrival_s = 0;
  double iter_time_s = 0;  // seconds per iteration at the GPU-proportional share
  int64_t iterations_total = 0;
  double speedup_at_ideal = 1;

  int64_t id = 0;
  // Whoever keeps the job (the scheduler: its entry for it). Never read here: a placement names
  // the job it places (JobPlacement::job), and through this its keeper finds its own entry
  // without a lookup by id.
  void* owner = nullptr;
  int32_t gpus = 1;
  bool starving = false;  // marked by the starvation guard (policy.hpp), for good
  // The job's ideal auxiliary demand per GPU and its speedup there, and its sensitivity matrix
  // W_j: as profiling estimated them (the job advances by its true matrix, which the scheduler
  // never sees). A null matrix means throughput 1 everywhere.
  double ideal_cpus_per_gpu = 0;
  double ideal_memory_gb_per_gpu = 0;
  std::shared_ptr<const SensitivityMatrix> sensitivity;
  // The speed-up (against the proportional share) the job is expected to run at: what SRTF and
  // FTF divide its remaining work by; the scheduler sets it each round (ExpectedSpeedup,
  // policy.hpp).
  double expected_speedup = 1;

  int64_t iterations_left = 0;
  double attained_gpu_s = 0;  // service received so far, GPU-seconds (LAS)
  double last_served_s = -1;  // end of the last round it ran in; -1: never ran

  double TypeSpeed(int32_t type) const {
    return type_speed && type < static_cast<int32_t>(type_speed->size()) ? (*type_speed)[type] : 1;
  }

  // Remaining time at the expected speed-up; ideal duration at the proportional share.
  double remaining_s() const {
    return static_cast<double>(iterations_left) * iter_time_s / expected_speedup;
  }
  double ideal_duration_s() const { return static_cast<double>(iterations_total) * iter_time_s; }
};

}  // namespace troupe::scheduling
