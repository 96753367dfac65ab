// Real compute in real mode: the options a run's jobs get (RunConfig.backends) and the arithmetic
// that turns measured steps into the iterations a lease is credited (docs/gpu.md, "Real compute
// in real mode").
//
// Units. A run's virtual seconds are the job's own seconds: what the catalogue's iter_time_s is
// measured in, and what a lease of [start_s, end_s) lasts. A step performs `scale` of one
// iteration's FLOPs (and all-reduces `scale` of its gradient), so on this hardware one iteration
// takes (step seconds / scale) seconds of the job's time: the measured counterpart of
// iter_time_s. run.time_scale only sets how long (wall) the worker gets to measure — a lease of L
// virtual seconds is L / time_scale wall seconds — it does not enter the iteration count: the
// hardware's speed does not change with the compression of the run's clock, so a lease is
// credited what the job would do in L seconds at the measured speed, exactly as the emulated
// throughput credits what it would do at iter_time_s.
//
// Contract: plain arithmetic, no state. MeasuredSecondsPerIteration answers 0 when nothing usable
// was measured (no step); IterationsFromMeasurement answers 0 for a non-positive rate.
#pragma once

#include <cstdint>
#include <string>

#include "gpu/collective_backend.hpp"
#include "gpu/compute_backend.hpp"

namespace troupe::gpu {

// What the jobs of a real-mode run do for their leases. compute == "emulated": the catalogue's
// throughput, nothing is run (the default, and every emulated run).
struct RealComputeOptions {
  std::string compute = "emulated";     // "emulated" | "cpu" | "cuda"
  std::string collective = "emulated";  // "emulated" | "cpu" | "nccl"
  StepSizing sizing;
  double gradient_bytes = 100.0 * 1024 * 1024;  // all-reduced per iteration by a multi-GPU job
  LinkModel link;                               // the "emulated" collective's link
  // A gang job whose parts run on several servers all-reduces its gradient across them every
  // this many steps (gpu/gang_exchange.hpp); 0: never.
  int32_t exchange_every_steps = 1;
  bool enabled() const { return compute != "emulated"; }
};

// The steps a worker ran in one lease. The first step of a lease warms caches and lazily
// initialised libraries, so it is kept apart: the rate is taken over the later steps when there
// are any.
struct StepSample {
  int64_t steps = 0;             // all steps, the first included
  double first_seconds = 0;      // the first step: compute + all-reduce
  double later_seconds = 0;      // every later step: compute + all-reduce, summed
  double allreduce_seconds = 0;  // the all-reduce part of all steps, summed (for reports)
  void Add(double compute_s, double allreduce_s);
};

// Seconds of job time one iteration takes at the measured rate:
//   (mean seconds of a step, compute + all-reduce) / scale,
// the mean over the steps after the first when there are some, else the first step alone.
// 0 when no step ran or scale is not positive.
double MeasuredSecondsPerIteration(const StepSample& sample, double scale);

// The fraction of its FLOPs a step was meant to perform: scale × iter_time_s ×
// reference_flops_per_s over plan.flops() (1 for an empty plan). A plan's rows are whole and at
// least one, so a short iteration on a slow reference (lstm's 11 ms at a CPU's rate: a fraction of
// one row) makes a step larger than `scale` of it; the job multiplies the measured seconds per
// iteration by this, so the rounding does not slow the job down.
double PlannedShareOfStep(const ModelProfile& model, const StepSizing& sizing,
                          const StepPlan& plan);

// Iterations in a lease of lease_s job seconds when an iteration takes seconds_per_iteration at
// the proportional share and the lease's allocation gives `speedup` (times a slow server's
// factor): floor(lease_s / (seconds_per_iteration / speedup)), the emulated model's formula
// (job_actor.cpp, IterationsIn) with the measured time in place of iter_time_s.
int64_t IterationsFromMeasurement(double lease_s, double seconds_per_iteration, double speedup);

// Floats a rank all-reduces per step: scale × gradient_bytes / 4, rounded, at least 1.
int64_t StepGradientFloats(double gradient_bytes, double scale);

}  // namespace troupe::gpu
