#include "gpu/gang_exchange.hpp"

#include <cstring>

#include "gpu/compute_backend.hpp"
#include "gpu/reduction_plan.hpp"

namespace troupe::gpu {
namespace {

// Streams past those the compute and the one-process collective use (0: weights, 1 + d: inputs,
// 1 + devices + r: per-device gradients; a job has at most a few thousand devices).
constexpr uint64_t kWeightStream = 1u << 20;
constexpr uint64_t kGradientStream = kWeightStream + 1;

}  // namespace

void GangGradient(uint64_t seed, int32_t rank, int64_t exchange, std::span<float> out) {
  const uint64_t base = static_cast<uint64_t>(exchange) * out.size();
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = SeededValue(seed, kGradientStream + static_cast<uint64_t>(rank), base + i);
  }
}

std::vector<float> GangInitialWeights(uint64_t seed, int64_t floats) {
  std::vector<float> weights(static_cast<size_t>(floats));
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = SeededValue(seed, kWeightStream, i);
  return weights;
}

void ApplyGangSum(std::span<const float> sum, std::span<float> weights) {
  for (size_t i = 0; i < weights.size(); ++i) weights[i] -= kGangLearningRate * sum[i];
}

std::vector<float> ReferenceWeights(uint64_t seed, int32_t ranks, int64_t floats,
                                    int64_t exchanges) {
  std::vector<float> weights = GangInitialWeights(seed, floats);
  std::vector<std::vector<float>> gradients(static_cast<size_t>(ranks),
                                            std::vector<float>(static_cast<size_t>(floats)));
  std::vector<float> sum(static_cast<size_t>(floats));
  for (int64_t e = 0; e < exchanges; ++e) {
    std::vector<std::span<const float>> contributions;
    for (int32_t r = 0; r < ranks; ++r) {
      GangGradient(seed, r, e, gradients[static_cast<size_t>(r)]);
      contributions.emplace_back(gradients[static_cast<size_t>(r)]);
    }
    AddInRankOrder(contributions, sum);
    ApplyGangSum(sum, weights);
  }
  return weights;
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
