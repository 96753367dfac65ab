// The spread over seeds `troupe sweep` prints beside each mean: the sample standard deviation
// (n - 1), on numbers whose answer is known.
#include "runner/seed_spread.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace troupe {
namespace {

TEST(SeedSpread, MeanAndSampleStandardDeviationOfKnownNumbers) {
  const SeedSpread s = SpreadOf({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.n, 8);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.sd, std::sqrt(32.0 / 7));  // population sd would be 2: n - 1, not n
  const SeedSpread three = SpreadOf({15.8, 16.2, 16.0});
  EXPECT_DOUBLE_EQ(three.mean, 16.0);
  EXPECT_NEAR(three.sd, 0.2, 1e-12);
}

TEST(SeedSpread, ASmallSpreadOnALargeMeanIsNotLost) {
  const SeedSpread s = SpreadOf({1e9 + 1, 1e9 + 2, 1e9 + 3});
  EXPECT_DOUBLE_EQ(s.mean, 1e9 + 2);
  EXPECT_DOUBLE_EQ(s.sd, 1);
}

TEST(SeedSpread, OneSeedHasNoSpreadAndNoneHasNoMean) {
  const SeedSpread one = SpreadOf({3.5});
  EXPECT_EQ(one.n, 1);
  EXPECT_DOUBLE_EQ(one.mean, 3.5);
  EXPECT_DOUBLE_EQ(one.sd, 0);
  EXPECT_EQ(SpreadOf({}).n, 0);
}

}  // namespace
}  // namespace troupe
