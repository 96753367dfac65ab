// Standing leases under faults (docs/runtime.md, "Standing leases"): in an emulated run whose
// faults are servers' crashes — declared, or drawn by a failure model — a job keeps its lease
// from round to round, and a failure cuts the lease standing on the failed server at the failure's
// instant, as it cuts a granted one: the job credits the rounds it stood, loses what the loss
// loses (everything since its last checkpoint under faults.recovery) and reports. Every record
// must be exactly that of the same run with every lease granted (run.lease_log: true grants every
// lease): jobs.csv, rounds.csv, interruptions.csv, faults.csv, each job's recovery costs and
// summary.json but for the counts of messages and events and the wall clock. And the standing run
// must send far fewer messages, or nothing stood.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// 4 servers x 4 GPUs, 60 jobs of 1-8 GPUs over ~10 hours: gang jobs span servers, and most
// rounds give most jobs the same share as the one before.
std::string SmallCluster(const std::string& policy) {
  return "cluster { servers { name: \"s\" count: 4 gpus: 4 cpus: 16 memory_gb: 200 } }\n"
         "workload { generator { jobs_per_hour: 6 num_jobs: 60 multi_gpu: true } }\n"
         "scheduler { policy: " +
         policy +
         " mechanism: tune }\n"
         "run { seed: 3 }\n";
}

// 16 x 0.02 + 4 / 50 = 0.4 failures an hour over the first 20 hours.
constexpr const char* kDrawnFailures =
    "failure_model { component { component: \"gpu\" per_gpu_hour: 0.02 } "
    "component { component: \"host\" mtbf_h: 50 } end_s: 72000 "
    "repair { distribution: \"lognormal\" mean_s: 1800 sigma: 1 } }\n";

// Crashes in the middle of rounds (of 300 s): server 1 for an hour, server 2 for half; and
// server 3 at a round's first instant (a lease that stood into that round never ran).
constexpr const char* kDeclaredCrashes =
    "fault { kind: crash target: \"server:1\" at_s: 7250 duration_s: 3600 } "
    "fault { kind: crash target: \"server:2\" at_s: 20010 duration_s: 1800 } "
    "fault { kind: crash target: \"server:3\" at_s: 28800 duration_s: 900 }\n";

// What must not differ: the summary but for what the protocol's messages are and what they took.
summaries::ClusterRunSummary Comparable(summaries::ClusterRunSummary s) {
  s.clear_messages();
  s.clear_events();
  s.clear_wall_s();
  s.clear_events_per_s();
  s.clear_messages_per_s();
  return s;
}

// Runs `config` (with its faults block) with standing leases and with every lease granted, and
// compares the records; the standing run sends at most `share` of the other's messages.
// `config` is the config's text, or with `repo_config` a config file of the repository.
// `sets` are overrides of both runs.
void ExpectSameRecordsAsEveryLeaseGranted(const std::string& name, const std::string& config,
                                          double share, bool repo_config = false,
                                          const std::vector<std::string>& sets = {}) {
  const std::string standing = FreshDir(name + "-standing"), granted = FreshDir(name + "-granted");
  const auto run = [&](std::vector<std::string> more) {
    more.insert(more.end(), sets.begin(), sets.end());
    return repo_config ? RunRepoConfig(config, more) : RunConfigText(config, more);
  };
  const RunResult with = run({"run.out_dir=" + standing});
  const RunResult without = run({"run.out_dir=" + granted, "run.lease_log=true"});
  ASSERT_GT(with.summary.jobs_finished(), 30) << name;
  ASSERT_GT(with.summary.faults_injected(), 0) << name;
  EXPECT_GT(with.summary.wasted_gpu_hours(), 0) << name << ": no failure cut a running lease";
  for (const char* file : {"/jobs.csv", "/rounds.csv", "/interruptions.csv", "/faults.csv"}) {
    const std::string bytes = ReadFile(standing + file);
    EXPECT_GT(bytes.size(), 100u) << name << file;
    EXPECT_TRUE(bytes == ReadFile(granted + file))
        << name << file << " differs from the run that grants every lease";
  }
  EXPECT_EQ(Comparable(with.summary).DebugString(), Comparable(without.summary).DebugString())
      << name << ": summary.json differs from the run that grants every lease";
  ASSERT_EQ(with.job_recovery.size(), without.job_recovery.size()) << name;
  for (size_t i = 0; i < with.job_recovery.size(); ++i) {
    const JobRecovery& a = with.job_recovery[i].costs;
    const JobRecovery& b = without.job_recovery[i].costs;
    const int64_t id = with.job_recovery[i].job_id;
    EXPECT_EQ(id, without.job_recovery[i].job_id) << name;
    EXPECT_EQ(a.checkpoints, b.checkpoints) << name << " job " << id;
    EXPECT_EQ(a.checkpoint_s, b.checkpoint_s) << name << " job " << id;
    EXPECT_EQ(a.restart_s, b.restart_s) << name << " job " << id;
    EXPECT_EQ(a.lost_s, b.lost_s) << name << " job " << id;
    EXPECT_EQ(a.interruptions, b.interruptions) << name << " job " << id;
  }
  EXPECT_LT(static_cast<double>(with.summary.messages()),
            share * static_cast<double>(without.summary.messages()))
      << name << ": " << with.summary.messages() << " messages against "
      << without.summary.messages() << " (did any lease stand?)";
}

TEST(StandingLeasesUnderFaults, DrawnFailuresWithYoungDalyCheckpointsGiveTheSameRecords) {
  ExpectSameRecordsAsEveryLeaseGranted(
      "drawn-young-daly",
      SmallCluster("fifo") + "faults { " + kDrawnFailures +
          " recovery { checkpoint: young_daly storage_gbps: 10 restart_s: 120 } }\n",
      0.5);
}

TEST(StandingLeasesUnderFaults, ServerCrashesMidRoundGiveTheSameRecords) {
  // Fixed checkpoints, LAS (preempts and moves jobs every round), and no recovery block at all
  // (a lease lost loses the lease alone).
  const std::string recovery =
      " recovery { checkpoint: fixed_interval checkpoint_interval_s: 900 restart_s: 60 }";
  ExpectSameRecordsAsEveryLeaseGranted(
      "crashes-fixed", SmallCluster("fifo") + "faults { " + kDeclaredCrashes + recovery + " }\n",
      0.5);
  ExpectSameRecordsAsEveryLeaseGranted(
      "crashes-las", SmallCluster("las") + "faults { " + kDeclaredCrashes + recovery + " }\n",
      0.95);
  ExpectSameRecordsAsEveryLeaseGranted(
      "crashes-plain", SmallCluster("fifo") + "faults { " + kDeclaredCrashes + " }\n", 0.5);
}

TEST(StandingLeasesUnderFaults, RepairsAtARoundsStartGiveTheSameRecords) {
  // Each server comes back at the very instant a round starts (10800, 21800 and 32100 s), some
  // in rounds where every lease stands: the round closes on its timer alone, and must still be
  // planned with the repaired server, as the reports of granted leases let it.
  const std::string crashes =
      "fault { kind: crash target: \"server:1\" at_s: 7250 duration_s: 3550 } "
      "fault { kind: crash target: \"server:2\" at_s: 20010 duration_s: 1790 } "
      "fault { kind: crash target: \"server:3\" at_s: 30100 duration_s: 2000 }\n";
  ExpectSameRecordsAsEveryLeaseGranted("repairs-at-round-start",
                                       SmallCluster("fifo") + "faults { " + crashes + " }\n", 0.5);
}

TEST(StandingLeasesUnderFaults, AFailureTraceGivesTheSameRecords) {
  // 16 servers of 8 GPUs, the servers' failures replayed from the repository's sample trace.
  ExpectSameRecordsAsEveryLeaseGranted(
      "failure-trace", "configs/failure-trace.textproto", 0.1, true,
      {"faults.failure_trace=" + SourcePath("configs/failure-trace-example.csv")});
}

}  // namespace
}  // namespace troupe::testing
