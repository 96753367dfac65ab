// The example policy of docs/extending.md (scheduling/examples/shortest_job_first.cpp): it is
// registered under "sjf" without any other file naming it, and orders jobs by ideal duration
// (iterations_total x iter_time_s), shortest first, ties by arrival then id, whatever their
// progress or the clock. QueueOrderTest checks its incremental order like every registered one.
#include <gtest/gtest.h>

#include <vector>

#include "scheduling/policy.hpp"
#include "scheduling/policy_registry.hpp"

namespace troupe::scheduling {
namespace {

SchedJob Job(int64_t id, double arrival_s, int64_t iterations, double iter_time_s) {
  SchedJob j;
  j.id = id;
  j.arrival_s = arrival_s;
  j.iter_time_s = iter_time_s;
  j.iterations_total = iterations;
  j.iterations_left = iterations;
  return j;
}

std::vector<int64_t> Order(double now_s, const std::vector<SchedJob>& jobs) {
  std::vector<const SchedJob*> ptrs;
  for (const SchedJob& j : jobs) ptrs.push_back(&j);
  OrderJobs(PolicyNamed("sjf"), now_s, ptrs);
  std::vector<int64_t> ids;
  for (const SchedJob* j : ptrs) ids.push_back(j->id);
  return ids;
}

TEST(ExamplePolicyTest, IsRegisteredWithItsNameAndFlags) {
  const PolicyDefinition* sjf = FindPolicy("sjf");
  ASSERT_NE(sjf, nullptr) << "known: " << RegisteredPolicyNames();
  EXPECT_EQ(sjf->name, "sjf");
  EXPECT_FALSE(sjf->key_reads_clock);
  EXPECT_FALSE(sjf->key_reads_expected_speedup);
  EXPECT_FALSE(sjf->constant_key);
}

TEST(ExamplePolicyTest, ShortestIdealDurationFirstThenArrivalThenId) {
  // Ideal durations: 1: 1000 s, 2: 200 s, 3: 600 s, 4: 200 s (arrived later than 2), 5: 200 s
  // (arrived with 4; higher id).
  const std::vector<SchedJob> jobs = {Job(1, 0, 1000, 1), Job(2, 10, 100, 2), Job(3, 20, 300, 2),
                                      Job(4, 30, 400, 0.5), Job(5, 30, 200, 1)};
  EXPECT_EQ(Order(100, jobs), (std::vector<int64_t>{2, 4, 5, 3, 1}));
}

TEST(ExamplePolicyTest, NeitherProgressNorSpeedupNorTheClockMovesAJob) {
  // Job 1 is long but nearly done, attained much service and runs fast: SJF still puts the
  // short job 2 first, at any time.
  std::vector<SchedJob> jobs = {Job(1, 0, 1000, 1), Job(2, 50, 500, 1)};
  jobs[0].iterations_left = 10;
  jobs[0].attained_gpu_s = 990;
  jobs[0].expected_speedup = 3;
  for (double now_s : {60.0, 1e4, 1e7}) {
    EXPECT_EQ(Order(now_s, jobs), (std::vector<int64_t>{2, 1})) << "at " << now_s;
  }
}

}  // namespace
}  // namespace troupe::scheduling
