// The compute worker: the real work of one lease of a real-mode job (RunConfig.backends.compute
// other than "emulated"; docs/gpu.md, "Real compute in real mode").
//
// The job actor spawns one when all parts of a lease are granted, detached (its own thread: a
// step blocks for its wall time, which must never hold a scheduler thread or the job actor). The
// worker makes its ComputeBackend (and, for a job of N > 1 GPUs, its CollectiveBackend), Leases
// the step plan on the job's N devices (seed: the job id), then runs steps — each step the GEMM
// chain on every device, then, with N > 1, an all-reduce of `scale` of the job's gradient — one
// message at a time, so an exit from the job stops it between two steps. After the step during
// which the lease's end (virtual end_s on the run's clock, so (end_s - now) / time_scale wall
// seconds) is reached, it Releases the backend and tells the job
//   (work_done_atom, lease_start_s, seconds_per_iteration, steps)
// or, when a backend fails, (work_fail_atom, lease_start_s, why); then it quits. It monitors
// the job and quits when the job is gone. It never runs under the virtual clock (emulated runs
// have no real compute).
#pragma once

#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/collective_backend.hpp"
#include "gpu/compute_backend.hpp"
#include "gpu/real_progress.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

using work_step_atom = caf::atom_constant<caf::atom("work_step")>;  // the worker's step loop
using work_done_atom = caf::atom_constant<caf::atom("work_done")>;  // worker -> job: measured
using work_fail_atom = caf::atom_constant<caf::atom("work_fail")>;  // worker -> job: an error

// One lease's work.
struct ComputeWork {
  gpu::RealComputeOptions options;
  gpu::StepPlan plan;  // PlanStep of the job's model under options.sizing
  int32_t devices = 1;
  uint64_t seed = 0;  // the job id: every lease of a job computes the same values
  double lease_start_s = 0;
  double lease_end_s = 0;
};

// What a job credited for one measured lease: a run's record of its real compute, for tests and
// tools that want to check or plot it (RunPlan.measured_leases; none by default).
struct MeasuredLease {
  int64_t job_id = 0;
  int64_t round = 0;
  double lease_s = 0;  // the lease's virtual length
  int32_t gpus = 0;
  int64_t steps = 0;
  double seconds_per_iteration = 0;  // measured: mean step / scale (0 when the work failed)
  double speedup = 0;                // the allocation's speedup (times a slow server's factor)
  int64_t iterations_possible = 0;   // IterationsFromMeasurement(lease_s, ...)
  int64_t iterations_done = 0;       // min(possible, iterations left)
};

// Thread-safe: jobs on CAF's threads append, the caller reads once the run is over.
class MeasuredLeaseLog {
 public:
  void Add(const MeasuredLease& lease) {
    std::lock_guard<std::mutex> lock(mu_);
    leases_.push_back(lease);
  }
  std::vector<MeasuredLease> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(leases_);
  }

 private:
  std::mutex mu_;
  std::vector<MeasuredLease> leases_;
};

// What a real-mode run hands its jobs when they do real compute (shared by all of them).
struct JobCompute {
  gpu::RealComputeOptions options;
  std::shared_ptr<MeasuredLeaseLog> log;  // none: nothing recorded
};

struct ComputeWorkerState {
  ComputeWork work;
  caf::actor job;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  std::unique_ptr<gpu::ComputeBackend> compute;
  std::unique_ptr<gpu::CollectiveBackend> collective;  // only for devices > 1
  std::vector<std::vector<float>> gradients;           // each rank's, all-reduced in place
  std::vector<std::vector<float>> pristine;            // restored before every all-reduce
  gpu::StepSample sample;
  static inline const char* name = "troupe.compute_worker";
};

caf::behavior ComputeWorkerActor(caf::stateful_actor<ComputeWorkerState>* self, ComputeWork work,
                                 caf::actor job, RunClock clock, Telemetry* telemetry);

}  // namespace troupe
