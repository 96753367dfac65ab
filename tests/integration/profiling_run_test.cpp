// Profiling inside a run: with optimistic profiling every job is measured in at most 8 points
// (240 with naive) before it may run, so it starts no earlier than the first round after its
// profile is ready; oracle profiling costs nothing. A limited number of profiling servers makes
// jobs wait for one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kConfig[] =
    "cluster { servers { count: 4 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
    "workload { generator { jobs_per_hour: 4 num_jobs: 100 } }\n";

double FirstRoundAtOrAfter(double t) { return std::ceil(t / 300) * 300; }

TEST(ProfilingRun, OptimisticMeasuresAtMostEightPointsAndDelaysTheStart) {
  RunResult r = RunConfigText(kConfig, {"scheduler.profiling=optimistic"});
  ASSERT_EQ(r.jobs.size(), 100u);
  for (const JobRecord& j : r.jobs) {
    EXPECT_GE(j.profiling_points, 3) << "job " << j.job_id;
    EXPECT_LE(j.profiling_points, 8) << "job " << j.job_id;
    EXPECT_DOUBLE_EQ(j.profiling_s, 60.0 * j.profiling_points);
    EXPECT_GE(j.start_s, FirstRoundAtOrAfter(j.arrival_s + j.profiling_s)) << "job " << j.job_id;
  }
}

TEST(ProfilingRun, NaiveMeasuresTheWholeGrid) {
  RunResult r = RunConfigText(kConfig, {"scheduler.profiling=naive"});
  ASSERT_EQ(r.jobs.size(), 100u);
  for (const JobRecord& j : r.jobs) {
    EXPECT_EQ(j.profiling_points, 240);
    EXPECT_DOUBLE_EQ(j.profiling_s, 14400);
    EXPECT_GE(j.start_s, j.arrival_s + 14400);
  }
}

TEST(ProfilingRun, OracleCostsNothing) {
  RunResult r = RunConfigText(kConfig);
  for (const JobRecord& j : r.jobs) {
    EXPECT_EQ(j.profiling_points, 0);
    EXPECT_DOUBLE_EQ(j.start_s, FirstRoundAtOrAfter(j.arrival_s)) << "an idle cluster starts it";
  }
}

TEST(ProfilingRun, OneProfilingServerMakesJobsWaitForIt) {
  // Naive profiling takes 4 h a job; one server profiles jobs arriving every 15 min in turn.
  RunResult r = RunConfigText(kConfig, {"scheduler.profiling=naive", "scheduler.profiler.servers=1",
                                        "workload.generator.num_jobs=6"});
  ASSERT_EQ(r.jobs.size(), 6u);
  std::vector<double> starts;
  for (const JobRecord& j : r.jobs) starts.push_back(j.start_s);
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i) {
    EXPECT_GE(starts[i] - starts[i - 1], 14400 - 300) << "profiled one after another";
  }
}

}  // namespace
}  // namespace troupe::testing
