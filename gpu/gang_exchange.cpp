#include "gpu/gang_exchange.hpp"

#include <algorithm>

#include "gpu/compute_backend.hpp"
#include "gpu/reduction_plan.hpp"

namespace troupe::gpu {
namespace {

// Streams past those the compute and the one-process collective use (0: weights, 1 + d: inputs,
// 1 + devices + r: per-device gradients; a job has at most a few thousand devices). Each data
// stream has two: features, then noise.
constexpr uint64_t kWeightStream = 1u << 20;
constexpr uint64_t kTargetStream = kWeightStream + 1;
constexpr uint64_t kHeldOutStream = kWeightStream + 2;
constexpr uint64_t kPartStream = kWeightStream + 4;

uint64_t FeatureStream(int32_t rank) {
  return rank < 0 ? kHeldOutStream : kPartStream + 2 * static_cast<uint64_t>(rank);
}

// x·w, added left to right.
float Dot(std::span<const float> x, std::span<const float> w) {
  float dot = 0;
  for (size_t j = 0; j < x.size(); ++j) dot += x[j] * w[j];
  return dot;
}

std::vector<float> TargetWeights(uint64_t seed, size_t floats) {
  std::vector<float> target(floats);
  for (size_t j = 0; j < floats; ++j) target[j] = SeededValue(seed, kTargetStream, j);
  return target;
}

// GangRow with w* already drawn.
float Row(uint64_t seed, int32_t rank, int64_t row, std::span<const float> target,
          std::span<float> x) {
  const uint64_t stream = FeatureStream(rank);
  const uint64_t base = static_cast<uint64_t>(row) * x.size();
  for (size_t j = 0; j < x.size(); ++j) x[j] = SeededValue(seed, stream, base + j);
  const float noise = SeededValue(seed, stream + 1, static_cast<uint64_t>(row));
  return Dot(x, target) + kGangNoise * noise;
}

}  // namespace

float GangRow(uint64_t seed, int32_t rank, int64_t row, std::span<float> x) {
  return Row(seed, rank, row, TargetWeights(seed, x.size()), x);
}

void GangGradient(uint64_t seed, int32_t rank, int64_t exchange, std::span<const float> weights,
                  std::span<float> out) {
  const std::vector<float> target = TargetWeights(seed, weights.size());
  std::vector<float> x(weights.size());
  std::fill(out.begin(), out.end(), 0.0f);
  for (int32_t b = 0; b < kGangBatchRows; ++b) {
    const float y = Row(seed, rank, exchange * kGangBatchRows + b, target, x);
    const float residual = Dot(x, weights) - y;
    for (size_t j = 0; j < out.size(); ++j) out[j] += residual * x[j];
  }
  const float scale = 2.0f / kGangBatchRows;
  for (float& g : out) g *= scale;
}

double GangHeldOutLoss(uint64_t seed, std::span<const float> weights) {
  const std::vector<float> target = TargetWeights(seed, weights.size());
  std::vector<float> x(weights.size());
  double loss = 0;
  for (int32_t b = 0; b < kGangHeldOutRows; ++b) {
    const float y = Row(seed, -1, b, target, x);
    const double residual = static_cast<double>(Dot(x, weights)) - y;
    loss += residual * residual;
  }
  return loss / kGangHeldOutRows;
}

std::vector<float> GangInitialWeights(uint64_t seed, int64_t floats) {
  std::vector<float> weights(static_cast<size_t>(floats));
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = SeededValue(seed, kWeightStream, i);
  return weights;
}

float GangLearningRate(int64_t floats, int32_t ranks) {
  const double rows = static_cast<double>(ranks) * kGangBatchRows;
  return static_cast<float>(3 * rows / (4 * (static_cast<double>(floats) + rows)));
}

void ApplyGangSum(std::span<const float> sum, int32_t ranks, std::span<float> weights) {
  const float step =
      GangLearningRate(static_cast<int64_t>(weights.size()), ranks) / static_cast<float>(ranks);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] -= step * sum[i];
}

std::vector<float> ReferenceWeights(uint64_t seed, int32_t ranks, int64_t floats,
                                    int64_t exchanges) {
  std::vector<float> weights = GangInitialWeights(seed, floats);
  AdvanceReferenceWeights(seed, ranks, 0, exchanges, &weights);
  return weights;
}

void AdvanceReferenceWeights(uint64_t seed, int32_t ranks, int64_t from_exchange,
                             int64_t to_exchange, std::vector<float>* weights) {
  const size_t floats = weights->size();
  std::vector<std::vector<float>> gradients(static_cast<size_t>(ranks), std::vector<float>(floats));
  std::vector<float> sum(floats);
  for (int64_t e = from_exchange; e < to_exchange; ++e) {
    std::vector<std::span<const float>> contributions;
    for (int32_t r = 0; r < ranks; ++r) {
      GangGradient(seed, r, e, *weights, gradients[static_cast<size_t>(r)]);
      contributions.emplace_back(gradients[static_cast<size_t>(r)]);
    }
    AddInRankOrder(contributions, sum);
    ApplyGangSum(sum, ranks, *weights);
  }
}

uint64_t WeightsHash(std::span<const float> weights) {
  uint64_t hash = 1469598103934665603ull;
  const auto* bytes = reinterpret_cast<const unsigned char*>(weights.data());
  for (size_t i = 0; i < weights.size_bytes(); ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace troupe::gpu
