// ScopedTempDir (tests/unit/scoped_temp_dir.hpp): what a unit test makes under /tmp goes with it.
#include "tests/unit/scoped_temp_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace troupe::test {
namespace {

namespace fs = std::filesystem;

TEST(ScopedTempDir, RemovesItsFolderAndEverythingInItAtScopeEnd) {
  std::string path;
  {
    const ScopedTempDir dir("scoped_check");
    path = dir.path();
    EXPECT_EQ(path.rfind(::testing::TempDir(), 0), 0u) << path;
    fs::create_directories(path + "/nested/deeper");
    std::ofstream(path + "/nested/deeper/file.bin") << "data";
    ASSERT_TRUE(fs::exists(path + "/nested/deeper/file.bin"));
  }
  EXPECT_FALSE(fs::exists(path)) << path;
}

TEST(ScopedTempDir, StartsEmptyWhenAnEarlierRunLeftItsFolder) {
  std::string path;
  {
    const ScopedTempDir first("scoped_leftover");
    path = first.path();
  }
  fs::create_directories(path);
  std::ofstream(path + "/stale.bin") << "stale";
  const ScopedTempDir second("scoped_leftover");
  EXPECT_FALSE(fs::exists(second.path())) << second.path();
}

}  // namespace
}  // namespace troupe::test
