// How a run ends: at the deadline (unfinished jobs reported as such), or once every measured job
// has finished while later jobs are still queued.
#include <gtest/gtest.h>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kBusyCluster[] =
    "cluster { servers { count: 2 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
    "workload { generator { jobs_per_hour: 9 num_jobs: 400 } }\n";

TEST(RunEnd, StopsAtTheDeadline) {
  RunResult r = RunConfigText(kBusyCluster, {"run.deadline_s=36000"});
  EXPECT_EQ(r.summary.end_reason(), "deadline");
  EXPECT_LE(r.summary.makespan_s(), 36000);
  EXPECT_EQ(r.summary.rounds(), 120);
  int64_t unfinished = 0;
  for (const JobRecord& j : r.jobs) {
    if (j.end_s < 0) {
      ++unfinished;
      EXPECT_LT(j.jct_s, 0);
    }
  }
  EXPECT_GT(unfinished, 0);
  EXPECT_EQ(unfinished + r.summary.jobs_finished(), static_cast<int64_t>(r.jobs.size()));
}

TEST(RunEnd, StopsWhenTheMeasuredJobsHaveFinished) {
  RunResult r =
      RunConfigText(kBusyCluster, {"run.measure_first_job=100", "run.measure_last_job=149"});
  EXPECT_EQ(r.summary.end_reason(), "measured jobs finished");
  EXPECT_EQ(r.summary.jobs_measured(), 50);
  EXPECT_EQ(r.summary.jobs_measured_finished(), 50);
  double last_measured_end = 0;
  for (const JobRecord& j : r.jobs) {
    EXPECT_EQ(j.measured, j.job_id >= 100 && j.job_id <= 149);
    if (j.measured) last_measured_end = std::max(last_measured_end, j.end_s);
  }
  EXPECT_DOUBLE_EQ(r.summary.makespan_s(), last_measured_end);
  EXPECT_LT(r.summary.jobs_finished(), 400);  // later jobs were still running or queued
}

}  // namespace
}  // namespace troupe::testing
