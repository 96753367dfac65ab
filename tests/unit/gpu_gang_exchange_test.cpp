// The gang's data-parallel training (gpu/gang_exchange.hpp): a linear regression whose parts each
// take the gradient of their own mini-batch's mean squared error at their current weights. It
// must learn (the held-out loss falls), and ReferenceWeights must equal the parts' exchanges
// computed by hand, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "gpu/gang_exchange.hpp"

namespace troupe::gpu {
namespace {

// Part `rank`'s gradient at `weights`, by hand: the rows from GangRow, residual = x·w − y,
// g = (2 / B) Σ_b residual_b x_b, in the order the header states.
std::vector<float> HandGradient(uint64_t seed, int32_t rank, int64_t exchange,
                                const std::vector<float>& weights) {
  std::vector<float> g(weights.size(), 0.0f);
  std::vector<float> x(weights.size());
  for (int32_t b = 0; b < kGangBatchRows; ++b) {
    const float y = GangRow(seed, rank, exchange * kGangBatchRows + b, x);
    float dot = 0;
    for (size_t j = 0; j < x.size(); ++j) dot += x[j] * weights[j];
    const float residual = dot - y;
    for (size_t j = 0; j < g.size(); ++j) g[j] += residual * x[j];
  }
  for (float& v : g) v *= 2.0f / kGangBatchRows;
  return g;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(GpuGangExchange, TheHeldOutLossFallsOverExchanges) {
  for (const int64_t floats : {16, 64, 1024}) {
    SCOPED_TRACE("floats " + std::to_string(floats));
    const double before = GangHeldOutLoss(3, ReferenceWeights(3, 2, floats, 0));
    const double early = GangHeldOutLoss(3, ReferenceWeights(3, 2, floats, 5));
    const double late = GangHeldOutLoss(3, ReferenceWeights(3, 2, floats, floats));
    EXPECT_GT(before, 1.0);  // initial weights are far from the target's
    EXPECT_LT(early, before);
    EXPECT_LT(late, 0.1 * before);
  }
}

TEST(GpuGangExchange, TheGradientIsThatOfTheBatchsMeanSquaredError) {
  const int64_t floats = 40;
  const std::vector<float> weights = GangInitialWeights(9, floats);
  std::vector<float> got(floats);
  GangGradient(9, 1, 2, weights, got);
  // In double, from the definition: d/dw (1/B) Σ (x·w − y)² = (2/B) Σ (x·w − y) x.
  std::vector<double> want(floats, 0.0);
  std::vector<float> x(floats);
  for (int32_t b = 0; b < kGangBatchRows; ++b) {
    const double y = GangRow(9, 1, 2 * kGangBatchRows + b, x);
    double residual = -y;
    for (int64_t j = 0; j < floats; ++j) residual += double{x[j]} * weights[j];
    for (int64_t j = 0; j < floats; ++j) want[j] += 2.0 / kGangBatchRows * residual * x[j];
  }
  for (int64_t j = 0; j < floats; ++j) EXPECT_NEAR(got[j], want[j], 1e-4 * (1 + std::abs(want[j])));
}

TEST(GpuGangExchange, AtTheTargetWeightsTheGradientIsOnlyNoise) {
  // y = x·w* + noise, so near w* (reached by many exchanges) each residual is about the noise and
  // the gradient is tiny, while at the initial weights it is not: the gradient is taken at the
  // weights it is given.
  const int64_t floats = 32;
  const std::vector<float> learned = ReferenceWeights(5, 1, floats, 200);
  std::vector<float> at_learned(floats);
  std::vector<float> at_start(floats);
  GangGradient(5, 0, 200, learned, at_learned);
  GangGradient(5, 0, 200, GangInitialWeights(5, floats), at_start);
  double norm_learned = 0;
  double norm_start = 0;
  for (int64_t j = 0; j < floats; ++j) {
    norm_learned += double{at_learned[j]} * at_learned[j];
    norm_start += double{at_start[j]} * at_start[j];
  }
  EXPECT_LT(norm_learned, 1e-3 * norm_start);
}

TEST(GpuGangExchange, TheReferenceEqualsEachRanksGradientAppliedByHand) {
  const uint64_t seed = 11;
  const int32_t ranks = 3;
  const int64_t floats = 33;
  std::vector<float> weights = GangInitialWeights(seed, floats);
  for (int64_t e = 0; e < 6; ++e) {
    std::vector<float> sum = HandGradient(seed, 0, e, weights);
    for (int32_t r = 1; r < ranks; ++r) {
      const std::vector<float> g = HandGradient(seed, r, e, weights);
      for (int64_t j = 0; j < floats; ++j) sum[j] += g[j];
    }
    const float step = GangLearningRate(floats, ranks) / ranks;
    for (int64_t j = 0; j < floats; ++j) weights[j] -= step * sum[j];
  }
  const std::vector<float> reference = ReferenceWeights(seed, ranks, floats, 6);
  EXPECT_TRUE(SameBits(reference, weights));
  EXPECT_EQ(WeightsHash(reference), WeightsHash(weights));
  // Each rank's data is its own: a gang of another size ends elsewhere.
  EXPECT_NE(WeightsHash(ReferenceWeights(seed, 2, floats, 6)), WeightsHash(reference));
}

}  // namespace
}  // namespace troupe::gpu
