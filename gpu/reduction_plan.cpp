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
  // Block by block through a small accumulator: every contribution's floats of a block are read
  // before the block is written, so `out` may be one of the contributions (a rank adds into the
  // slice that holds its own). Each float sees the same additions in the same order as one pass
  // per rank would make.
  constexpr size_t kBlock = 1024;
  float sum[kBlock];
  for (size_t at = 0; at < out.size(); at += kBlock) {
    const size_t n = std::min(kBlock, out.size() - at);
    std::copy_n(contributions[0].begin() + static_cast<ptrdiff_t>(at), n, sum);
    for (size_t r = 1; r < contributions.size(); ++r) {
      const float* rank = contributions[r].data() + at;
      for (size_t i = 0; i < n; ++i) sum[i] += rank[i];
    }
    std::copy_n(sum, n, out.begin() + static_cast<ptrdiff_t>(at));
  }
}

}  // namespace troupe::gpu
