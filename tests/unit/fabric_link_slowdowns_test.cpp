// LinkSlowdowns (fabric/link_slowdowns.hpp): a link runs at the factor of the stretch that holds
// over [from_s, to_s), at full capacity outside every stretch, at the slowest where stretches
// overlap; other links are untouched, and a lookup gives the same answer however many stretches
// the run drew.
#include <gtest/gtest.h>

#include <vector>

#include "fabric/link_slowdowns.hpp"

namespace troupe::fabric {
namespace {

TEST(LinkSlowdownsTest, AStretchHoldsFromItsStartUntilItsEnd) {
  const LinkSlowdowns s({{.link = 3, .from_s = 100, .to_s = 200, .factor = 0.25}});
  EXPECT_EQ(s.FactorAt(3, 99.999), 1);
  EXPECT_EQ(s.FactorAt(3, 100), 0.25);
  EXPECT_EQ(s.FactorAt(3, 199.999), 0.25);
  EXPECT_EQ(s.FactorAt(3, 200), 1);
  EXPECT_EQ(s.FactorAt(2, 150), 1);
  EXPECT_EQ(s.FactorAt(4, 150), 1);
  EXPECT_EQ(s.links(), std::vector<int32_t>{3});
}

TEST(LinkSlowdownsTest, WhereStretchesOverlapTheSlowestHolds) {
  // Given out of order and on two links.
  const LinkSlowdowns s({{.link = 1, .from_s = 150, .to_s = 300, .factor = 0.5},
                         {.link = 0, .from_s = 0, .to_s = 50, .factor = 0.9},
                         {.link = 1, .from_s = 100, .to_s = 200, .factor = 0.2},
                         {.link = 1, .from_s = 120, .to_s = 130, .factor = 0.8}});
  EXPECT_EQ(s.FactorAt(1, 110), 0.2);
  EXPECT_EQ(s.FactorAt(1, 125), 0.2);  // 0.8 inside 0.2's stretch changes nothing
  EXPECT_EQ(s.FactorAt(1, 160), 0.2);
  EXPECT_EQ(s.FactorAt(1, 200), 0.5);  // 0.2 has ended, 0.5 goes on
  EXPECT_EQ(s.FactorAt(1, 300), 1);
  EXPECT_EQ(s.FactorAt(0, 10), 0.9);
  EXPECT_EQ(s.links(), (std::vector<int32_t>{0, 1}));
}

TEST(LinkSlowdownsTest, ManyStretchesGiveTheFactorOfTheOneThatHolds) {
  std::vector<LinkSlowdown> stretches;
  for (int i = 0; i < 10000; ++i) {
    stretches.push_back({.link = 7, .from_s = 10.0 * i, .to_s = 10.0 * i + 5, .factor = 0.5});
  }
  const LinkSlowdowns s(std::move(stretches));
  for (int i = 0; i < 10000; i += 997) {
    EXPECT_EQ(s.FactorAt(7, 10.0 * i + 1), 0.5) << i;
    EXPECT_EQ(s.FactorAt(7, 10.0 * i + 6), 1) << i;
  }
}

TEST(LinkSlowdownsTest, NoStretchOrAnEmptyOneSlowsNothing) {
  EXPECT_TRUE(LinkSlowdowns().empty());
  const LinkSlowdowns s({{.link = 2, .from_s = 10, .to_s = 10, .factor = 0.5}});
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.FactorAt(2, 10), 1);
}

}  // namespace
}  // namespace troupe::fabric
