// AddInRankOrder (gpu/reduction_plan.hpp) adds in place: an all-reduce rank adds its peers'
// contributions into the floats that hold its own, and the sum must be the left-to-right sum of
// separate buffers bit for bit, across the function's internal blocks.
#include "gpu/reduction_plan.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <span>
#include <vector>

namespace troupe::gpu {
namespace {

std::vector<std::vector<float>> Contributions(size_t ranks, size_t length) {
  std::mt19937 draw(static_cast<uint32_t>(ranks * 7919 + length));
  std::normal_distribution<float> gradient(0.0f, 1.0f);
  std::vector<std::vector<float>> out(ranks, std::vector<float>(length));
  for (auto& c : out) {
    for (float& v : c) v = gradient(draw) * 1e-3f;  // many exponents: a changed order shows
  }
  return out;
}

// The definition: one pass per rank, left to right, into a separate buffer.
std::vector<float> LeftToRight(const std::vector<std::vector<float>>& c) {
  std::vector<float> sum = c[0];
  for (size_t r = 1; r < c.size(); ++r) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += c[r][i];
  }
  return sum;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

TEST(AddInRankOrder, IntoASeparateBufferIsTheLeftToRightSum) {
  for (size_t length : {size_t{1}, size_t{1023}, size_t{1024}, size_t{2500}}) {
    const auto c = Contributions(3, length);
    std::vector<float> out(length);
    AddInRankOrder({c[0], c[1], c[2]}, out);
    EXPECT_TRUE(SameBits(out, LeftToRight(c))) << length << " floats";
  }
}

TEST(AddInRankOrder, IntoAContributionsOwnFloatsIsTheSameSum) {
  for (size_t mine : {size_t{0}, size_t{1}, size_t{3}}) {
    auto c = Contributions(4, 2500);  // more than one internal block
    const std::vector<float> expected = LeftToRight(c);
    std::vector<std::span<const float>> spans(c.begin(), c.end());
    AddInRankOrder(spans, c[mine]);
    EXPECT_TRUE(SameBits(c[mine], expected)) << "sum written over rank " << mine << "'s floats";
  }
}

TEST(PlanReduction, EveryRankOwnsOneContiguousChunkInOrder) {
  const auto plan = PlanReduction(10, 3, 2);  // chunks of 4, 3, 3 floats
  ASSERT_EQ(plan.size(), 6u);
  const int32_t owners[] = {0, 0, 1, 1, 2, 2};
  const int64_t lengths[] = {2, 2, 2, 1, 2, 1};
  for (size_t s = 0; s < plan.size(); ++s) {
    EXPECT_EQ(plan[s].owner, owners[s]) << "segment " << s;
    EXPECT_EQ(plan[s].length, lengths[s]) << "segment " << s;
  }
  EXPECT_TRUE(PlanReduction(0, 3, 2).empty());
}

}  // namespace
}  // namespace troupe::gpu
