// Standing leases (messages/cluster_messages.hpp): an emulated run without faults lets a job keep
// its lease from round to round without a grant or a report, and the records must be exactly
// those of a run that grants and reports every lease. A run with the lease log grants every
// lease (the log lists each round's parts as granted), so it is the reference: same config, same
// seed, jobs.csv and rounds.csv byte for byte, for policies that keep placements (FIFO) and ones
// that preempt and reshuffle every round (LAS, SRTF, FTF), single- and multi-GPU jobs, profiled
// jobs, heterogeneous GPU types. The standing run must also send fewer messages (at most `share` of
// the other's), or nothing stood.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr const char* kCluster =
    "cluster { servers { count: 4 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
    "workload { generator { jobs_per_hour: 8 num_jobs: 600 multi_gpu: MULTI } }\n"
    "run { seed: 3 measure_first_job: 200 measure_last_job: 399 }\n";

std::string ClusterConfig(bool multi_gpu) {
  std::string text = kCluster;
  text.replace(text.find("MULTI"), 5, multi_gpu ? "true" : "false");
  return text;
}

// Runs `config` with standing leases (no lease log) and with every lease granted (lease log),
// and compares the records.
void ExpectSameRecordsAsEveryLeaseGranted(const std::string& name, const std::string& config,
                                          const std::vector<std::string>& sets, bool repo_config,
                                          double share) {
  const std::string standing = FreshDir(name + "-standing"), granted = FreshDir(name + "-granted");
  std::vector<std::string> a = sets, b = sets;
  a.push_back("run.out_dir=" + standing);
  b.push_back("run.out_dir=" + granted);
  b.push_back("run.lease_log=true");
  const RunResult with = repo_config ? RunRepoConfig(config, a) : RunConfigText(config, a);
  const RunResult without = repo_config ? RunRepoConfig(config, b) : RunConfigText(config, b);
  ASSERT_GT(with.summary.jobs_finished(), 100) << name;
  for (const char* file : {"/jobs.csv", "/rounds.csv"}) {
    const std::string bytes = ReadFile(standing + file);
    EXPECT_GT(bytes.size(), 1000u) << name << file;
    EXPECT_TRUE(bytes == ReadFile(granted + file))
        << name << file << " differs from the run that grants every lease";
  }
  EXPECT_LT(static_cast<double>(with.summary.messages()),
            share * static_cast<double>(without.summary.messages()))
      << name << ": " << with.summary.messages() << " messages against "
      << without.summary.messages() << " (did any lease stand?)";
}

TEST(StandingLeases, FifoProportionalRecordsAreThoseOfEveryLeaseGranted) {
  ExpectSameRecordsAsEveryLeaseGranted("fifo", ClusterConfig(false), {}, false, 0.2);
}

TEST(StandingLeases, PreemptingPoliciesOnMultiGpuJobsGiveTheSameRecords) {
  struct Cell {
    std::vector<std::string> sets;
    double share;  // LAS moves the most jobs every round: the fewest leases stand
  };
  const std::vector<Cell> cells = {
      {{"scheduler.policy=las", "scheduler.mechanism=tune"}, 0.85},
      {{"scheduler.policy=srtf", "scheduler.mechanism=greedy"}, 0.3},
      {{"scheduler.policy=ftf", "scheduler.mechanism=proportional"}, 0.45},
      // Profiled jobs wait for their profiles; their demands change when the profile comes.
      {{"scheduler.policy=srtf", "scheduler.mechanism=tune", "scheduler.profiling=optimistic"},
       0.3},
  };
  for (const Cell& cell : cells) {
    ExpectSameRecordsAsEveryLeaseGranted(cell.sets[0].substr(17), ClusterConfig(true), cell.sets,
                                         false, cell.share);
  }
}

TEST(StandingLeases, HeterogeneousGpuTypesGiveTheSameRecords) {
  ExpectSameRecordsAsEveryLeaseGranted("hetero", "configs/gavel-hetero.textproto",
                                       {"run.measure_first_job=50", "run.measure_last_job=149"},
                                       true, 0.55);
}

}  // namespace
}  // namespace troupe::testing
