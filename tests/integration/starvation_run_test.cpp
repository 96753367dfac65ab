// The starvation guard on a long queue (the scheduler keeps such a queue ordered between rounds
// and asks the guard only for the jobs that became due: scheduling/cluster_scheduler_queue.cpp).
// Debug builds (make test-asan) also check every round against the whole queue's order.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// 16 GPUs and ~400 queued jobs at the peak: long enough to be kept ordered under every policy.
std::string Busy(const std::string& policy, double starvation_s) {
  return "cluster { servers { count: 2 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
         "workload { generator { jobs_per_hour: 30 num_jobs: 500 multi_gpu: true } }\n"
         "scheduler { policy: " +
         policy + " mechanism: tune starvation_s: " + std::to_string(starvation_s) +
         " }\n"
         "run { seed: 5 measure_first_job: 0 measure_last_job: 499 }\n";
}

void ExpectAllFinished(const RunResult& r, const std::string& policy) {
  ASSERT_EQ(r.jobs.size(), 500u) << policy;
  for (const JobRecord& j : r.jobs) EXPECT_GE(j.end_s, 0) << policy << ": job " << j.job_id;
}

// Job id -> the start of its first round.
std::map<int64_t, double> Starts(const RunResult& r) {
  std::map<int64_t, double> starts;
  for (const JobRecord& j : r.jobs) starts[j.job_id] = j.start_s;
  return starts;
}

// With a bound of two hours the guard sends long-waiting jobs ahead under SRTF, LAS and FTF, every
// job still finishes once, and the queue is long enough for the scheduler to keep it ordered
// between rounds (more than 4 heads of 64 jobs), where the guard is asked only for the jobs that
// became due. FIFO leaves the mark unread, as Synergy's simulator's FIFO does: the bound changes
// nothing there, although TUNE may leave a started job out of a round to fit an older one.
TEST(StarvationRun, OnALongQueueTheGuardActsAndEveryJobFinishes) {
  for (const std::string policy : {"fifo", "las", "srtf", "ftf"}) {
    const RunResult guarded = RunConfigText(Busy(policy, 7200));
    const RunResult unguarded = RunConfigText(Busy(policy, 0));
    ExpectAllFinished(guarded, policy);
    ExpectAllFinished(unguarded, policy);
    if (policy == "fifo") {
      EXPECT_EQ(Starts(guarded), Starts(unguarded)) << "fifo read the guard's mark";
    } else {
      EXPECT_NE(Starts(guarded), Starts(unguarded)) << policy << ": the guard changed nothing";
    }
    int32_t longest_queue = 0;
    for (const RoundRecord& round : guarded.rounds) {
      longest_queue = std::max(longest_queue, round.jobs_queued);
    }
    EXPECT_GT(longest_queue, 4 * 64) << policy;
  }
}

}  // namespace
}  // namespace troupe::testing
