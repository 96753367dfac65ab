// Determinism: emulated mode with the same config and seed writes byte-identical jobs.csv and
// rounds.csv (DESIGN.md); a different seed gives a different run.
#include <gtest/gtest.h>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

TEST(Determinism, DefaultConfigTwiceGivesIdenticalFiles) {
  const std::string a = FreshDir("det-a"), b = FreshDir("det-b");
  RunResult first = RunRepoConfig("configs/default.textproto", {"run.out_dir=" + a});
  RunResult second = RunRepoConfig("configs/default.textproto", {"run.out_dir=" + b});
  ASSERT_EQ(first.summary.end_reason(), "measured jobs finished");
  ASSERT_EQ(first.summary.jobs_measured_finished(), 1000);
  for (const char* file : {"/jobs.csv", "/rounds.csv"}) {
    const std::string bytes_a = ReadFile(a + file), bytes_b = ReadFile(b + file);
    EXPECT_GT(bytes_a.size(), 1000u) << file;
    EXPECT_TRUE(bytes_a == bytes_b) << file << " differs between two runs of the same config";
  }
  EXPECT_EQ(first.summary.messages(), second.summary.messages());
  EXPECT_EQ(first.summary.events(), second.summary.events());
}

TEST(Determinism, AnotherSeedGivesAnotherRun) {
  const std::string config =
      "cluster { servers { count: 2 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
      "workload { generator { jobs_per_hour: 9 num_jobs: 200 } }\n";
  RunResult one = RunConfigText(config, {"run.seed=1"});
  RunResult two = RunConfigText(config, {"run.seed=2"});
  ASSERT_EQ(one.summary.jobs_finished(), 200);
  ASSERT_EQ(two.summary.jobs_finished(), 200);
  EXPECT_NE(one.summary.jct_mean_s(), two.summary.jct_mean_s());
}

}  // namespace
}  // namespace troupe::testing
