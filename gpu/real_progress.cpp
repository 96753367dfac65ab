#include "gpu/real_progress.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace troupe::gpu {

void StepSample::Add(double compute_s, double allreduce_s) {
  const double step_s = compute_s + allreduce_s;
  if (steps == 0) {
    first_seconds = step_s;
  } else {
    later_seconds += step_s;
  }
  allreduce_seconds += allreduce_s;
  ++steps;
}

double MeasuredSecondsPerIteration(const StepSample& sample, double scale) {
  if (sample.steps <= 0 || !(scale > 0)) return 0;
  const double step_s = sample.steps > 1
                            ? sample.later_seconds / static_cast<double>(sample.steps - 1)
                            : sample.first_seconds;
  return step_s / scale;
}

double PlannedShareOfStep(const ModelProfile& model, const StepSizing& sizing,
                          const StepPlan& plan) {
  const double performed = plan.flops();
  if (!(performed > 0)) return 1;
  return model.iter_time_s * sizing.reference_flops_per_s * sizing.scale / performed;
}

int64_t IterationsFromMeasurement(double lease_s, double seconds_per_iteration, double speedup) {
  if (!(seconds_per_iteration > 0) || !(speedup > 0) || !(lease_s > 0)) return 0;
  const double per_iteration = seconds_per_iteration / speedup;
  const double iterations = std::floor(lease_s / per_iteration);
  // A step measured at a few nanoseconds could claim more than an int64 holds.
  if (!(iterations < static_cast<double>(std::numeric_limits<int64_t>::max()))) {
    return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(iterations);
}

int64_t StepGradientFloats(double gradient_bytes, double scale) {
  const double floats = std::round(gradient_bytes * scale / sizeof(float));
  return std::max<int64_t>(1, static_cast<int64_t>(floats));
}

}  // namespace troupe::gpu
