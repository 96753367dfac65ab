// ServerSet (scheduling/server_set.hpp): the same members, in the same order, as a std::set under
// any mix of inserts and erases, across word boundaries and a capacity that is no multiple of 64.
#include "scheduling/server_set.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace troupe::scheduling {
namespace {

TEST(ServerSet, AgreesWithATreeSetUnderRandomInsertsAndErases) {
  for (int32_t capacity : {1, 63, 64, 65, 130, 2048}) {
    ServerSet set(capacity);
    std::set<int32_t> expected;
    std::mt19937 rng(static_cast<uint32_t>(capacity));
    for (int step = 0; step < 4000; ++step) {
      const int32_t server = static_cast<int32_t>(rng() % static_cast<uint32_t>(capacity));
      if (rng() % 3 == 0) {
        set.erase(server);
        expected.erase(server);
      } else {
        set.insert(server);
        expected.insert(server);
      }
      ASSERT_EQ(set.size(), expected.size()) << "capacity " << capacity << ", step " << step;
      ASSERT_EQ(set.empty(), expected.empty());
      ASSERT_EQ(set.contains(server), expected.contains(server));
      if (step % 97 == 0) {
        ASSERT_EQ(std::vector<int32_t>(set.begin(), set.end()),
                  std::vector<int32_t>(expected.begin(), expected.end()))
            << "capacity " << capacity << ", step " << step;
      }
    }
  }
}

TEST(ServerSet, EmptyAndBoundaryMembers) {
  ServerSet set(128);
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.begin(), set.end());
  for (int32_t s : {127, 0, 64, 63}) set.insert(s);
  set.insert(64);  // twice: still one member
  EXPECT_EQ(set.size(), 4u);
  EXPECT_EQ(std::vector<int32_t>(set.begin(), set.end()), (std::vector<int32_t>{0, 63, 64, 127}));
  set.erase(5);  // not a member: nothing changes
  set.erase(0);
  EXPECT_EQ(*set.begin(), 63);
}

}  // namespace
}  // namespace troupe::scheduling
