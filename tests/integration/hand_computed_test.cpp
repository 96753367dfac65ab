// Synergy's round semantics on a case small enough to compute by hand: one server of 8 GPUs, 24
// CPUs and 500 GB, FIFO + GPU-proportional, 300 s rounds. A job allocated in a round advances
// floor(300 / iter_time) iterations (speedup 1 at the proportional share) and its JCT is the end
// of the round in which it finished minus its arrival. A job whose GPUs are not free is skipped
// and later jobs may still run.
#include <gtest/gtest.h>

#include <map>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// job  model    iter  GPUs arrival iterations  per round                 rounds run   JCT
//  0   alexnet  0.6    8      0       1200      500 -> 500,500,200        0,1,2        900-0
//  1   res50    0.78   4     10       1000      384 -> 384,384,232        3,4,5        1800-10
//  2   gnmt     0.12   4    650       2600      2500 -> 2500,100          3,4          1500-650
//  3   lstm     0.011  8    700      30000      27272 -> 27272,2728       6,7          2400-700
//  4   m5       0.6    2   1000        400      500 -> 400                5 (3 skipped) 1800-1000
// Round 5 (1500 s): job 1 holds 4 GPUs, job 3 needs 8 and is skipped, job 4 takes 2.
constexpr char kTrace[] =
    "job_id,model,arrival_s,iterations,gpus\n"
    "0,alexnet,0,1200,8\n"
    "1,res50,10,1000,4\n"
    "2,gnmt,650,2600,4\n"
    "3,lstm,700,30000,8\n"
    "4,m5,1000,400,2\n";

TEST(HandComputed, ThreeJobsOnOneServerGiveSynergysJcts) {
  const std::string dir = FreshDir("hand");
  WriteFile(dir + "/trace.csv", kTrace);
  RunResult r = RunConfigText(
      "cluster { servers { count: 1 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
      "workload { trace_file: \"" +
      dir + "/trace.csv\" }\n");
  ASSERT_EQ(r.jobs.size(), 5u);
  const std::map<int64_t, double> expected_jct = {
      {0, 900}, {1, 1790}, {2, 850}, {3, 1700}, {4, 800}};
  const std::map<int64_t, double> expected_start = {
      {0, 0}, {1, 900}, {2, 900}, {3, 1800}, {4, 1500}};
  for (const JobRecord& job : r.jobs) {
    EXPECT_DOUBLE_EQ(job.jct_s, expected_jct.at(job.job_id)) << "job " << job.job_id;
    EXPECT_DOUBLE_EQ(job.start_s, expected_start.at(job.job_id)) << "job " << job.job_id;
  }
  EXPECT_EQ(r.summary.rounds(), 8);
  EXPECT_DOUBLE_EQ(r.summary.makespan_s(), 2400);
  EXPECT_EQ(r.summary.end_reason(), "all jobs finished");
  // Round 5: job 1 (4 GPUs) and job 4 (2 GPUs) run, job 3 waits.
  ASSERT_GE(r.rounds.size(), 6u);
  EXPECT_EQ(r.rounds[5].gpus_allocated, 6);
  EXPECT_DOUBLE_EQ(r.rounds[5].cpus_allocated, 18);
  EXPECT_DOUBLE_EQ(r.rounds[5].memory_gb_allocated, 375);
  EXPECT_EQ(r.rounds[5].jobs_queued, 1);
}

// A job arriving exactly at a round boundary is scheduled in that round; an idle cluster sleeps
// until the round of the next arrival instead of ticking through empty rounds.
TEST(HandComputed, ArrivalOnABoundaryRunsThatRoundAndIdleRoundsAreSkipped) {
  const std::string dir = FreshDir("boundary");
  WriteFile(dir + "/trace.csv",
            "job_id,model,arrival_s,iterations,gpus\n"
            "0,alexnet,300,500,1\n"
            "1,alexnet,30000,501,1\n");
  RunResult r = RunConfigText(
      "cluster { servers { count: 1 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
      "workload { trace_file: \"" +
      dir + "/trace.csv\" }\n");
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_DOUBLE_EQ(r.jobs[0].start_s, 300);
  EXPECT_DOUBLE_EQ(r.jobs[0].jct_s, 300);
  EXPECT_DOUBLE_EQ(r.jobs[1].start_s, 30000);
  EXPECT_DOUBLE_EQ(r.jobs[1].jct_s, 600);  // 501 iterations need two rounds of 500
  EXPECT_EQ(r.summary.rounds(), 3);        // the 99 empty rounds between them are not run
}

}  // namespace
}  // namespace troupe::testing
