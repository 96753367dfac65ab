// The public Philly trace (data/philly.csv): its first 5,000 jobs run to completion on a 512-GPU
// cluster.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

TEST(Philly, First5000JobsCompleteOn512Gpus) {
  const std::string trace = DataPath("philly.csv");
  ASSERT_TRUE(std::filesystem::exists(trace)) << trace << " ships with troupe (data/README.md)";
  RunResult r = RunRepoConfig("configs/philly-512.textproto",
                              {"workload.trace_file=" + trace, "workload.max_jobs=5000"});
  ASSERT_EQ(r.jobs.size(), 5000u);
  EXPECT_EQ(r.summary.jobs_finished(), 5000);
  EXPECT_EQ(r.summary.end_reason(), "all jobs finished");
  std::set<int32_t> gpu_counts;
  for (const JobRecord& j : r.jobs) {
    EXPECT_GE(j.jct_s, 300) << "job " << j.job_id;  // at least one round
    gpu_counts.insert(j.gpus);
  }
  EXPECT_GT(gpu_counts.size(), 3u) << "the trace mixes job sizes";
  EXPECT_GT(r.summary.gpu_utilisation(), 0);
  EXPECT_LE(r.summary.gpu_utilisation(), 1);
}

}  // namespace
}  // namespace troupe::testing
