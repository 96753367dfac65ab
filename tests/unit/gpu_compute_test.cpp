// The compute backends (gpu/compute_backend.hpp): the CPU GEMM against the textbook triple loop,
// step sizing against the model catalogue, the CPU step against a naive chain, and the cuBLAS
// step against the CPU one where a GPU answers (skipped, with the reason, where none does).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gpu/compute_backend.hpp"
#include "gpu/cpu_gemm.hpp"
#include "workload/model_catalog.hpp"

namespace troupe::gpu {
namespace {

std::vector<float> Seeded(uint64_t seed, uint64_t stream, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = SeededValue(seed, stream, i);
  return v;
}

// C = A · B, each element summed over k ascending from 0.
std::vector<float> TripleLoop(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                              int64_t n, int64_t k) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
  }
  return c;
}

TEST(GpuCpuGemm, MatchesTheTripleLoopBitForBit) {
  // Shapes that cross the row (32) and depth (128) blocks and leave ragged edges.
  const int64_t m = 45, n = 37, k = 300;
  const std::vector<float> a = Seeded(3, 1, m * k), b = Seeded(3, 2, k * n);
  std::vector<float> c(m * n, std::nanf(""));
  GemmRowMajor(a.data(), b.data(), c.data(), m, n, k);
  EXPECT_EQ(c, TripleLoop(a, b, m, n, k));
}

TEST(GpuSeededValue, IsDeterministicNonZeroAndInRange) {
  for (uint64_t i = 0; i < 10000; ++i) {
    const float v = SeededValue(7, 3, i);
    ASSERT_NE(v, 0.0f);
    ASSERT_GT(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    ASSERT_EQ(v, SeededValue(7, 3, i));
  }
  EXPECT_NE(SeededValue(7, 3, 0), SeededValue(8, 3, 0));
  EXPECT_NE(SeededValue(7, 3, 0), SeededValue(7, 4, 0));
}

TEST(GpuComputePlan, FlopsMatchTheModelsIterationCost) {
  const ModelProfile* res50 = ModelCatalog::BuiltIn().Find("res50");
  ASSERT_NE(res50, nullptr);
  StepSizing sizing;
  StepPlan plan;
  ASSERT_TRUE(PlanStep(*res50, sizing, &plan).ok());
  const double target = res50->iter_time_s * sizing.reference_flops_per_s * sizing.scale;
  EXPECT_EQ(plan.width, sizing.width);
  EXPECT_EQ(plan.gemms, sizing.gemms);
  // rows is rounded to the nearest whole row: off by at most half a row's FLOPs.
  const double per_row = 2.0 * sizing.width * sizing.width * sizing.gemms;
  EXPECT_LE(std::abs(plan.flops() - target), per_row / 2);
  EXPECT_EQ(plan.rows, std::llround(target / per_row));
}

TEST(GpuComputePlan, RejectsBadSizingAndKeepsOneRow) {
  const ModelProfile* res50 = ModelCatalog::BuiltIn().Find("res50");
  ASSERT_NE(res50, nullptr);
  StepSizing sizing;
  sizing.scale = 0;
  StepPlan plan;
  EXPECT_EQ(PlanStep(*res50, sizing, &plan).code(), Status::Code::kInvalidInput);
  ModelProfile no_time = *res50;
  no_time.iter_time_s = 0;
  EXPECT_EQ(PlanStep(no_time, StepSizing{}, &plan).code(), Status::Code::kInvalidInput);
  EXPECT_EQ(PlanStepForFlops(1.0, 64, 2).rows, 1);
}

TEST(GpuComputeBackend, UnknownKindIsInvalidInput) {
  std::unique_ptr<ComputeBackend> backend;
  EXPECT_EQ(MakeComputeBackend("tpu", &backend).code(), Status::Code::kInvalidInput);
}

// The step's output on device d: the chain computed with the triple loop.
std::vector<float> NaiveChain(const StepPlan& plan, uint64_t seed, int device) {
  const float scale = std::sqrt(3.0f / static_cast<float>(plan.width));
  std::vector<float> x = Seeded(seed, 1 + device, plan.rows * plan.width);
  for (int32_t l = 0; l < plan.gemms; ++l) {
    std::vector<float> w(plan.width * plan.width);
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] = scale * SeededValue(seed, 0, l * w.size() + i);
    }
    x = TripleLoop(x, w, plan.rows, plan.width, plan.width);
  }
  return x;
}

TEST(GpuCpuCompute, EachDeviceComputesItsChainAndIsTimed) {
  std::unique_ptr<ComputeBackend> cpu;
  ASSERT_TRUE(MakeComputeBackend("cpu", &cpu).ok());
  const StepPlan plan{.rows = 19, .width = 40, .gemms = 3};
  ASSERT_TRUE(cpu->Lease(plan, 2, 11).ok());
  StepTiming timing;
  ASSERT_TRUE(cpu->RunStep(&timing).ok());
  EXPECT_GT(timing.seconds, 0);
  ASSERT_EQ(timing.device_seconds.size(), 2u);
  EXPECT_GT(timing.device_seconds[1], 0);
  EXPECT_EQ(timing.flops, 2 * plan.flops());
  for (int d = 0; d < 2; ++d) {
    std::vector<float> out;
    ASSERT_TRUE(cpu->ReadOutput(d, &out).ok());
    EXPECT_EQ(out, NaiveChain(plan, 11, d)) << "device " << d;
  }
  std::vector<float> out;
  EXPECT_EQ(cpu->ReadOutput(2, &out).code(), Status::Code::kInvalidInput);
  cpu->Release();
  EXPECT_FALSE(cpu->RunStep(&timing).ok());
  EXPECT_EQ(cpu->Lease(plan, 0, 11).code(), Status::Code::kInvalidInput);
}

// The rate a "cpu" run converts iteration times at when the config gives none (run_setup.cpp).
TEST(GpuCpuCompute, CalibrationMeasuresAPositiveFiniteRate) {
  for (int64_t width : {64, 1024, 65536}) {
    double flops_per_s = 0;
    ASSERT_TRUE(MeasureCpuFlopsPerS(width, &flops_per_s).ok()) << width;
    EXPECT_TRUE(std::isfinite(flops_per_s)) << width;
    EXPECT_GT(flops_per_s, 1e6) << width;  // even a sanitised build does a megaflop a second
  }
}

TEST(GpuCudaCompute, MatchesTheCpuReference) {
  std::unique_ptr<ComputeBackend> cuda;
  if (Status s = MakeComputeBackend("cuda", &cuda); !s.ok()) GTEST_SKIP() << s.message();
  std::unique_ptr<ComputeBackend> cpu = MakeCpuComputeBackend();
  const StepPlan plan{.rows = 77, .width = 96, .gemms = 3};
  const int devices = std::min(2, cuda->max_devices());
  ASSERT_TRUE(cuda->Lease(plan, devices, 5).ok());
  ASSERT_TRUE(cpu->Lease(plan, devices, 5).ok());
  StepTiming cuda_timing, cpu_timing;
  ASSERT_TRUE(cuda->RunStep(&cuda_timing).ok());
  ASSERT_TRUE(cpu->RunStep(&cpu_timing).ok());
  EXPECT_GT(cuda_timing.device_seconds[0], 0);
  for (int d = 0; d < devices; ++d) {
    std::vector<float> got, want;
    ASSERT_TRUE(cuda->ReadOutput(d, &got).ok());
    ASSERT_TRUE(cpu->ReadOutput(d, &want).ok());
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << "device " << d << " " << i;
    }
  }
  if (devices < 2) {
    std::cout << "GpuCudaCompute: one GPU visible, the two-device lease was not tested\n";
  }
}

}  // namespace
}  // namespace troupe::gpu
