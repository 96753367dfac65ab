// ClosestName / DidYouMean (base/closest_name.hpp): the "did you mean" a misspelt config field,
// policy, mechanism or fault kind gets.
#include "base/closest_name.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace troupe {
namespace {

const std::vector<std::string> kFields = {"servers", "count",       "gpus_per_server",
                                          "round_s", "policy_name", "mechanism_name"};

TEST(ClosestName, FindsAFieldWithinAFewEdits) {
  EXPECT_EQ(ClosestName("sever", kFields), "servers");                  // 2 edits
  EXPECT_EQ(ClosestName("cuont", kFields), "count");                    // a swap is one edit
  EXPECT_EQ(ClosestName("gpu_per_servr", kFields), "gpus_per_server");  // 2 edits, long name
  EXPECT_EQ(ClosestName("Round_S", kFields), "round_s");                // case ignored
  EXPECT_EQ(ClosestName("policyname", kFields), "policy_name");
}

TEST(ClosestName, FindsANameByItsPrefix) {
  EXPECT_EQ(ClosestName("mechanism", kFields), "mechanism_name");
  EXPECT_EQ(ClosestName("gpus", kFields), "gpus_per_server");
}

TEST(ClosestName, PrefersTheFewestEdits) {
  const std::vector<std::string> policies = {"fifo", "ftf", "las", "srtf"};
  EXPECT_EQ(ClosestName("fifp", policies), "fifo");
  EXPECT_EQ(ClosestName("srf", policies), "srtf");
  EXPECT_EQ(ClosestName("lsa", policies), "las");
  EXPECT_EQ(ClosestName("crsh", {"crash", "slow", "drop", "delay"}), "crash");
  EXPECT_EQ(ClosestName("dely", {"crash", "slow", "drop", "delay"}), "delay");
}

TEST(ClosestName, SuggestsNothingFarOff) {
  EXPECT_EQ(ClosestName("colour", kFields), "");
  EXPECT_EQ(ClosestName("xyz", {"fifo", "ftf", "las", "srtf"}), "");
  EXPECT_EQ(ClosestName("", kFields), "");
  EXPECT_EQ(ClosestName("ab", {"abcdef"}), "");  // a prefix of under 3 characters is no hint
  EXPECT_EQ(ClosestName(std::string(100000, 's'), kFields), "");
}

TEST(DidYouMean, IsAQuotedSuffixOrNothing) {
  EXPECT_EQ(DidYouMean("sever", kFields), " (did you mean 'servers'?)");
  EXPECT_EQ(DidYouMean("colour", kFields), "");
}

}  // namespace
}  // namespace troupe
