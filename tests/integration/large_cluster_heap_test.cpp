// A run of 4,096 GPUs or more has the troupe program back its heap with 2 MiB pages
// (base/huge_pages.hpp). That may not change what a run computes: the program's records equal
// those of the same run in this test process, whose allocator keeps 4 KiB pages.
#include <gtest/gtest.h>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// 512 servers of 8 GPUs and a queue tens of thousands deep (its entries grow the heap by tens of
// megabytes), placed by TUNE, cut off after 200 rounds.
const char kLargeCluster[] =
    "cluster { servers { name: \"s\" count: 512 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
    "workload { generator { jobs_per_hour: 6000 num_jobs: 100000 multi_gpu: true } }\n"
    "scheduler { mechanism: tune }\n"
    "run { seed: 3 deadline_s: 60000 measure_first_job: 0 measure_last_job: 99999 }\n";

TEST(LargeClusterHeap, TheProgramsRecordsEqualThoseOfTheSameRunInProcess) {
  const std::string dir = FreshDir("large-cluster-heap");
  WriteFile(dir + "/config.textproto", kLargeCluster);
  const ProcessResult program =
      RunTroupe({"run", dir + "/config.textproto", "--quiet", "--out", dir + "/program"});
  ASSERT_EQ(program.exit_code, 0) << program.err;
  const RunResult in_process = RunConfigText(kLargeCluster, {"run.out_dir=" + dir + "/in-process"});
  ASSERT_GT(in_process.jobs.size(), 40000u);

  const std::string jobs = ReadFile(dir + "/program/jobs.csv");
  EXPECT_GT(jobs.size(), 1000000u);
  EXPECT_EQ(jobs, ReadFile(dir + "/in-process/jobs.csv"));
  EXPECT_EQ(ReadFile(dir + "/program/rounds.csv"), ReadFile(dir + "/in-process/rounds.csv"));
}

}  // namespace
}  // namespace troupe::testing
