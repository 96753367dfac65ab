#include "gpu/compute_backend.hpp"

#include <algorithm>
#include <cmath>

namespace troupe::gpu {

StepPlan PlanStepForFlops(double flops, int64_t width, int32_t gemms) {
  StepPlan plan;
  plan.width = std::max<int64_t>(1, width);
  plan.gemms = std::max<int32_t>(1, gemms);
  const double per_row = 2.0 * static_cast<double>(plan.width) * static_cast<double>(plan.width) *
                         static_cast<double>(plan.gemms);
  plan.rows = std::max<int64_t>(1, std::llround(flops / per_row));
  return plan;
}

Status PlanStep(const ModelProfile& model, const StepSizing& sizing, StepPlan* plan) {
  if (!(sizing.reference_flops_per_s > 0) || !(sizing.scale > 0) || sizing.width < 1 ||
      sizing.gemms < 1) {
    return Status::InvalidInput(
        "step sizing: reference_flops_per_s, scale, width and gemms must "
        "be positive");
  }
  if (!(model.iter_time_s > 0)) {
    return Status::InvalidInput("model '" + model.name + "' has no iteration time");
  }
  *plan = PlanStepForFlops(model.iter_time_s * sizing.reference_flops_per_s * sizing.scale,
                           sizing.width, sizing.gemms);
  return Status::Ok();
}

float SeededValue(uint64_t seed, uint64_t stream, uint64_t i) {
  // SplitMix64 of (seed, stream, i): a counter-based draw, so any element is computed on its own
  // and every backend fills its buffers with the same numbers.
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + stream * 0xD1B54A32D192ED03ull + i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  // 24 random bits -> an odd multiple of 2^-24 in (-1, 1): never exactly zero.
  const auto bits = static_cast<int64_t>(z >> 40);
  return static_cast<float>(2 * bits + 1 - (int64_t{1} << 24)) / static_cast<float>(1 << 24);
}

}  // namespace troupe::gpu
