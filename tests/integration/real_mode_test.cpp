// Real mode: the same actors on CAF's thread pool and the wall clock, with time_scale compressing
// emulated time. Rounds end on the wall clock, yet a 20-job run must give the same order of
// completion and JCTs within 2% of the emulated run.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// 20 jobs queueing on one 8-GPU server: a few hundred rounds of 300 s.
constexpr char kConfig[] =
    "cluster { servers { count: 1 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
    "workload { generator { jobs_per_hour: 9 num_jobs: 20 multi_gpu: true } }\n"
    "run { seed: 3 }\n";

std::vector<int64_t> CompletionOrder(const RunResult& r) {
  std::vector<const JobRecord*> jobs;
  for (const JobRecord& j : r.jobs) jobs.push_back(&j);
  std::sort(jobs.begin(), jobs.end(), [](const JobRecord* a, const JobRecord* b) {
    return std::tie(a->end_s, a->job_id) < std::tie(b->end_s, b->job_id);
  });
  std::vector<int64_t> order;
  for (const JobRecord* j : jobs) order.push_back(j->job_id);
  return order;
}

TEST(RealMode, AgreesWithEmulatedMode) {
  RunResult emulated = RunConfigText(kConfig);
  // 300 s rounds in 0.5 ms of wall time.
  RunResult real = RunConfigText(kConfig, {"run.mode=real", "run.time_scale=600000"});
  ASSERT_EQ(emulated.summary.jobs_finished(), 20);
  ASSERT_EQ(real.summary.jobs_finished(), 20);
  EXPECT_EQ(real.summary.mode(), "real");
  EXPECT_GT(emulated.summary.rounds(), 100);
  EXPECT_EQ(CompletionOrder(emulated), CompletionOrder(real));
  std::map<int64_t, double> emulated_jct;
  for (const JobRecord& j : emulated.jobs) emulated_jct[j.job_id] = j.jct_s;
  for (const JobRecord& j : real.jobs) {
    EXPECT_NEAR(j.jct_s, emulated_jct.at(j.job_id), 0.02 * emulated_jct.at(j.job_id))
        << "job " << j.job_id;
  }
}

}  // namespace
}  // namespace troupe::testing
