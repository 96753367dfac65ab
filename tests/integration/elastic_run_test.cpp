// Runs with on_server_loss continue_smaller (docs/faults.md "Recovery"): a job that loses one of
// its two servers goes on at once on the other, at half its speed, until the failed server is
// back; never below min_size_fraction; runs without the field unchanged.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// One res18 job of `gpus` GPUs (3,450 s alone) on `servers` 4-GPU servers, its trace in a fresh
// folder `name`, under the faults block `faults`.
RunResult RunOneJob(const std::string& name, int servers, int gpus, const std::string& faults,
                    bool lease_log = false) {
  const std::string trace = FreshDir(name) + "/trace.csv";
  WriteFile(trace, "job_id,model,arrival_s,duration_s,gpus\n0,res18,0,3450," +
                       std::to_string(gpus) + "\n");
  return RunConfigText("cluster { servers { name: \"s\" count: " + std::to_string(servers) +
                       " gpus: 4 cpus: 16 memory_gb: 200 } }\n"
                       "workload { trace_file: \"" +
                       trace + "\" }\n" + (lease_log ? "run { lease_log: true }\n" : "") +
                       "faults { " + faults + " }\n");
}

// One 8-GPU job on two 4-GPU servers; server 1 dies 100 s into the first round, back at 700 s.
RunResult RunGangJob(const std::string& on_loss) {
  return RunOneJob("elastic", 2, 8,
                   "fault { kind: crash target: \"server:1\" at_s: 100 duration_s: 600 }\n"
                   "  recovery { restart_s: 60 " +
                       on_loss + " }",
                   /*lease_log=*/true);
}

// GPUs the job held in each round, by server.
std::map<int64_t, std::map<int32_t, int>> GpusByRound(const RunResult& r) {
  std::map<int64_t, std::map<int32_t, int>> gpus;
  for (const LeaseRecord& l : r.leases) {
    gpus[l.round][l.server] += static_cast<int>(l.gpu_ids.size());
  }
  return gpus;
}

TEST(ElasticRun, AJobGoesOnSmallerAtItsSpeedUntilTheServerIsBack) {
  const RunResult smaller = RunGangJob("on_server_loss: continue_smaller min_size_fraction: 0.5");
  const RunResult wait = RunGangJob("");
  ASSERT_EQ(smaller.jobs.size(), 1u);
  ASSERT_EQ(wait.jobs.size(), 1u);
  const auto rounds = GpusByRound(smaller);
  // Rounds 0-2 (0-900 s; server 1 is down from 100 s to 700 s, so round 2 is planned without
  // it): 4 GPUs on server 0. Round 3: whole again.
  for (int64_t round = 0; round <= 2; ++round) {
    EXPECT_EQ(rounds.at(round), (std::map<int32_t, int>{{0, 4}})) << "round " << round;
  }
  EXPECT_EQ(rounds.at(3), (std::map<int32_t, int>{{0, 4}, {1, 4}}));
  EXPECT_TRUE(GpusByRound(wait).count(1) == 0) << "waiting for its size, it holds nothing";
  // From 100 s to 900 s at half speed, less its restart: 370 s of full-speed training that the
  // waiting job does not have (and that waits 900 s for its restart), so it ends one round
  // sooner. At full speed on 4 GPUs it would have gained 740 s: two rounds or three.
  EXPECT_EQ(wait.jobs[0].end_s - smaller.jobs[0].end_s, 300);
  EXPECT_EQ(smaller.job_recovery.at(0).costs.interruptions, 1);
}

TEST(ElasticRun, BelowTheFractionTheJobWaitsAsWithoutIt) {
  const RunResult strict = RunGangJob("on_server_loss: continue_smaller min_size_fraction: 0.75");
  const RunResult wait = RunGangJob("");
  ASSERT_EQ(strict.jobs.size(), 1u);
  EXPECT_EQ(strict.jobs[0].end_s, wait.jobs[0].end_s);
  EXPECT_EQ(strict.leases.size(), wait.leases.size());
}

TEST(ElasticRun, ServersLostAtOneInstantLeaveTheJobOnTheServerItStillHolds) {
  // A 12-GPU job on three 4-GPU servers; a switch takes servers 0 and 1 at 100 s until 700 s.
  const auto run = [](const std::string& on_loss) {
    return RunOneJob("elastic-switch", 3, 12,
                     "fault { kind: crash target: \"server:0-1\" at_s: 100 duration_s: 600 }\n"
                     "  recovery { restart_s: 60 " +
                         on_loss + " }",
                     /*lease_log=*/true);
  };
  const RunResult smaller = run("on_server_loss: continue_smaller min_size_fraction: 0.3");
  const RunResult wait = run("");
  ASSERT_EQ(smaller.jobs.size(), 1u);
  ASSERT_EQ(wait.jobs.size(), 1u);
  const auto rounds = GpusByRound(smaller);
  ASSERT_TRUE(rounds.contains(0));
  EXPECT_EQ(rounds.at(0), (std::map<int32_t, int>{{2, 4}})) << "on at once, on server 2";
  EXPECT_GE(smaller.jobs[0].end_s, 0);
  EXPECT_LT(smaller.jobs[0].end_s, wait.jobs[0].end_s);
}

TEST(ElasticRun, AFailureOfTheSmallerLeaseWastesOnlyTheGpusThatTrained) {
  // Server 0 dies 10 s in: 10 s of the 8-GPU lease are lost, and the job goes on at once on
  // server 1's 4 GPUs; server 1 dies at 290 s: what those 4 GPUs trained since is lost.
  const RunResult r = RunOneJob(
      "elastic-wasted", 2, 8,
      "fault { kind: crash target: \"server:0\" at_s: 10 duration_s: 600 }\n"
      "  fault { kind: crash target: \"server:1\" at_s: 290 duration_s: 600 }\n"
      "  recovery { restart_s: 60 on_server_loss: continue_smaller min_size_fraction: 0.5 }");
  ASSERT_EQ(r.jobs.size(), 1u);
  ASSERT_EQ(r.job_recovery.size(), 1u);
  const JobRecovery& costs = r.job_recovery[0].costs;
  EXPECT_EQ(costs.interruptions, 2);
  ASSERT_GT(costs.lost_s, 10 + 200) << "the smaller lease trained before server 1 died";
  EXPECT_NEAR(r.jobs[0].wasted_gpu_s, 8 * 10 + 4 * (costs.lost_s - 10), 1e-6);
}

// A 12-GPU job on three 4-GPU servers, fraction 0.3, under `faults` (and restarts of 60 s).
RunResult RunTwelveGpuJob(const std::string& name, const std::string& faults) {
  return RunOneJob(
      name, 3, 12,
      faults +
          "\n  recovery { checkpoint: fixed_interval checkpoint_interval_s: 150 "
          "restart_s: 60\n    on_server_loss: continue_smaller min_size_fraction: 0.3 }");
}

TEST(ElasticRun, TheSummaryCountsASmallerLeaseAtTheGpusItHeld) {
  // Server 2 dies 100 s into the first round: the job goes on at once on 8 GPUs, paying its
  // restart there; server 1 dies at 280 s: the 8 GPUs' training since the restart is lost, and
  // the job goes on on server 0's 4 GPUs, paying its restart again.
  const RunResult r =
      RunTwelveGpuJob("elastic-summary",
                      "fault { kind: crash target: \"server:2\" at_s: 100 duration_s: 600 }\n"
                      "  fault { kind: crash target: \"server:1\" at_s: 280 duration_s: 600 }");
  ASSERT_EQ(r.jobs.size(), 1u);
  ASSERT_EQ(r.job_recovery.size(), 1u);
  const JobRecovery& costs = r.job_recovery[0].costs;
  ASSERT_EQ(costs.interruptions, 2);
  ASSERT_GE(costs.restart_s, 120) << "two restarts of 60 s and the read";
  const summaries::RecoverySummary& s = r.summary.recovery();
  EXPECT_NEAR(s.lost_work_gpu_hours() * 3600, r.jobs[0].wasted_gpu_s, 1e-6);
  EXPECT_NEAR(s.lost_work_gpu_hours(), r.summary.wasted_gpu_hours(), 1e-9);
  // Two equal restarts, the first on 8 GPUs, the second on 4: never on all 12 GPUs.
  EXPECT_NEAR(s.restart_gpu_hours() * 3600, (8 + 4) * costs.restart_s / 2, 1e-6);
  // Held: the leases' GPU time, the 12 GPUs' 100 s and the 8 GPUs' 180 s cut short.
  EXPECT_NEAR(s.held_gpu_hours() * 3600, r.jobs[0].gpu_seconds + 12 * 100 + 8 * 180, 1e-6);
  EXPECT_NEAR(s.productive_gpu_hours(),
              s.held_gpu_hours() - s.lost_work_gpu_hours() - s.restart_gpu_hours() -
                  s.checkpoint_gpu_hours(),
              1e-9);
}

TEST(ElasticRun, ServersLostAtOneInstantInterruptTheJobOnce) {
  // Servers 0 and 1 at 100 s: the job is relet on 8 GPUs, then on 4, at that instant; the
  // failures' records count one interruption of it, and so does the job.
  const RunResult r = RunTwelveGpuJob(
      "elastic-instant", "fault { kind: crash target: \"server:0-1\" at_s: 100 duration_s: 600 }");
  ASSERT_EQ(r.job_recovery.size(), 1u);
  ASSERT_EQ(r.servers_down.size(), 2u);
  EXPECT_EQ(r.servers_down[0].jobs_hit + r.servers_down[1].jobs_hit, 1);
  EXPECT_EQ(r.job_recovery[0].costs.interruptions, 1);
  EXPECT_EQ(r.summary.failures().jobs_hit(), r.summary.recovery().interruptions());
}

}  // namespace
}  // namespace troupe::testing
