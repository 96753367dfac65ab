// The arithmetic of real compute in real mode (gpu/real_progress.hpp): measured steps to job
// seconds per iteration, and a lease's iterations from that, as the emulated model counts them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpu/real_progress.hpp"
#include "workload/model_catalog.hpp"

namespace troupe::gpu {
namespace {

// lstm (11 ms) at a CPU's 10 GFLOP/s and scale 1e-3 is 110 kFLOP, under one 1024-wide row of
// 8 GEMMs (16.8 MFLOP): the step does ~150x its share, and the job must not run ~150x slower.
TEST(GpuRealProgress, PlannedShareUndoesTheRoundingOfRows) {
  ModelProfile lstm;
  lstm.iter_time_s = 0.011;
  StepSizing sizing;
  sizing.reference_flops_per_s = 10e9;
  StepPlan plan;
  ASSERT_TRUE(PlanStep(lstm, sizing, &plan).ok());
  ASSERT_EQ(plan.rows, 1);
  const double share = PlannedShareOfStep(lstm, sizing, plan);
  EXPECT_DOUBLE_EQ(share, 0.011 * 10e9 * 1e-3 / plan.flops());
  // A step at exactly 10 GFLOP/s then costs the job the catalogue's 11 ms an iteration.
  StepSample sample;
  sample.Add(plan.flops() / 10e9, 0);
  EXPECT_NEAR(MeasuredSecondsPerIteration(sample, sizing.scale) * share, 0.011, 1e-12);
  // A plan of many rows is (almost) exactly its share: the GPU path's numbers barely move.
  StepSizing v100;
  ModelProfile res50;
  res50.iter_time_s = 0.78;
  ASSERT_TRUE(PlanStep(res50, v100, &plan).ok());
  EXPECT_NEAR(PlannedShareOfStep(res50, v100, plan), 1.0, 1e-3);
}

TEST(GpuRealProgress, SecondsPerIterationIsTheMeanLaterStepOverScale) {
  StepSample sample;
  sample.Add(0.5, 0.0);      // the first step: warm-up, left out of the rate
  sample.Add(0.002, 0.001);  // 3 ms
  sample.Add(0.004, 0.001);  // 5 ms
  EXPECT_EQ(sample.steps, 3);
  EXPECT_DOUBLE_EQ(sample.allreduce_seconds, 0.002);
  // (3 ms + 5 ms) / 2 = 4 ms a step; a step is 1e-3 of an iteration: 4 s an iteration.
  EXPECT_DOUBLE_EQ(MeasuredSecondsPerIteration(sample, 1e-3), 0.004 / 1e-3);
}

TEST(GpuRealProgress, OneStepIsItsOwnRateAndNoStepIsNone) {
  StepSample one;
  one.Add(0.25, 0.05);
  EXPECT_DOUBLE_EQ(MeasuredSecondsPerIteration(one, 0.5), 0.3 / 0.5);
  EXPECT_EQ(MeasuredSecondsPerIteration(StepSample{}, 0.5), 0);
  EXPECT_EQ(MeasuredSecondsPerIteration(one, 0), 0);
}

TEST(GpuRealProgress, IterationsFollowTheEmulatedFormula) {
  // With the measured time equal to the catalogue's, a lease gets what the emulated model gives:
  // floor(lease / (iter_time / speedup)), the same operations in the same order.
  for (const ModelProfile& m : ModelCatalog::BuiltIn().models()) {
    for (double speedup : {1.0, 1.15, 0.6}) {
      const double per_iteration = m.iter_time_s / speedup;
      const auto expected = static_cast<int64_t>(std::floor(300.0 / per_iteration));
      EXPECT_EQ(IterationsFromMeasurement(300, m.iter_time_s, speedup), expected) << m.name;
    }
  }
  // 300 s at 0.78 s an iteration: 384 (384 x 0.78 = 299.52).
  EXPECT_EQ(IterationsFromMeasurement(300, 0.78, 1), 384);
  // Twice as slow hardware: half the iterations, rounded down.
  EXPECT_EQ(IterationsFromMeasurement(300, 1.56, 1), 192);
  // An exact multiple is not lost to rounding: 3600 / 0.5.
  EXPECT_EQ(IterationsFromMeasurement(3600, 0.5, 1), 7200);
}

TEST(GpuRealProgress, NothingMeasuredCreditsNothing) {
  EXPECT_EQ(IterationsFromMeasurement(300, 0, 1), 0);
  EXPECT_EQ(IterationsFromMeasurement(300, -1, 1), 0);
  EXPECT_EQ(IterationsFromMeasurement(300, std::nan(""), 1), 0);
  EXPECT_EQ(IterationsFromMeasurement(0, 0.5, 1), 0);
  EXPECT_EQ(IterationsFromMeasurement(300, 0.5, 0), 0);
  // A rate far beyond int64 saturates instead of overflowing.
  EXPECT_EQ(IterationsFromMeasurement(1e30, 1e-12, 1), std::numeric_limits<int64_t>::max());
}

TEST(GpuRealProgress, StepGradientIsScaleOfTheIterationsGradient) {
  // 100 MiB x 1e-3 / 4 bytes = 26214.4 floats -> 26214.
  EXPECT_EQ(StepGradientFloats(100.0 * 1024 * 1024, 1e-3), 26214);
  EXPECT_EQ(StepGradientFloats(4096, 1), 1024);
  EXPECT_EQ(StepGradientFloats(1, 1e-6), 1);  // never empty
}

}  // namespace
}  // namespace troupe::gpu
