#include "gpu/reduction_plan.hpp"

#include <algorithm>

namespace troupe::gpu {

std::vector<ReductionSegment> PlanReduction(int64_t length, int32_t ranks, int64_t segment_floats) {
  std::vector<ReductionSegment> segments;
  const int64_t base = length / ranks, longer = length % ranks;
  int64_t offset = 0;
  for (int32_t owner = 0; owner < ranks; ++owner) {
    const int64_t end = offset + base + (owner < longer ? 1 : 0);
    for (int64_t at = offset; at < end; at += segment_floats) {
      segments.push_back({owner, at, std::min(segment_floats, end - at)});
    }
    offset = end;
  }
  return segments;
}

void AddInRankOrder(const std::vector<std::span<const float>>& contributions,
                    std::span<float> out) {
  std::copy(contributions[0].begin(), contributions[0].end(), out.begin());
  for (size_t r = 1; r < contributions.size(); ++r) {
    const std::span<const float> rank = contributions[r];
    for (size_t i = 0; i < out.size(); ++i) out[i] += rank[i];
  }
}

}  // namespace troupe::gpu
