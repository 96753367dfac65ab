// Runs under faults.recovery (docs/faults.md, "Recovery"): a run without failures loses nothing
// and restarts nothing, every_lease with free restarts loses exactly what a run without the
// block wastes (job by job: the lease a failure cut short), a crashed job's lost work is its
// wasted GPU time, a job that loses leases back to its last checkpoint is rolled back and still
// finishes, and two runs write the same records.
#include <gtest/gtest.h>

#include <map>

#include "tests/integration/fault_fixture.hpp"

namespace troupe::testing {
namespace {

std::map<int64_t, JobRecovery> CostsById(const RunResult& r) {
  std::map<int64_t, JobRecovery> costs;
  for (const JobRecoveryRecord& c : r.job_recovery) costs[c.job_id] = c.costs;
  return costs;
}

const std::vector<std::string> kFailures = {"crash:server:1@7200+3600",
                                            "crash:server:2@20000+1800"};

TEST(RecoveryRun, AJobWithNoFailuresLosesNothing) {
  const RunResult r = RunConfigText(
      FaultTestConfig() +
      "faults { recovery { checkpoint: fixed_interval checkpoint_interval_s: 900 restart_s: 60 } "
      "}\n");
  EXPECT_EQ(r.summary.end_reason(), "all jobs finished");
  ASSERT_FALSE(r.job_recovery.empty());
  int checkpoints = 0;
  for (const JobRecoveryRecord& c : r.job_recovery) {
    EXPECT_EQ(c.costs.lost_s, 0) << "job " << c.job_id;
    EXPECT_EQ(c.costs.restart_s, 0) << "job " << c.job_id;
    EXPECT_EQ(c.costs.interruptions, 0) << "job " << c.job_id;
    checkpoints += c.costs.checkpoints;
  }
  EXPECT_GT(checkpoints, 0) << "the jobs did checkpoint, at their write cost";
  for (const JobRecord& j : r.jobs) EXPECT_EQ(j.wasted_gpu_s, 0) << "job " << j.job_id;
  EXPECT_GT(r.summary.recovery().checkpoint_gpu_hours(), 0);
  EXPECT_LT(r.summary.recovery().effective_training_ratio(), 1);
}

TEST(RecoveryRun, EveryLeaseWithFreeRestartsLosesWhatARunWithoutTheBlockWastes) {
  const std::string config = FaultTestConfig();
  const RunResult plain = RunWithFaults(config, kFailures);
  config::Faults faults = FaultBlock(kFailures);
  faults.mutable_recovery()->set_state_factor(0);  // free reads: the restart costs nothing
  const RunResult costed = RunConfigText(config + "faults { " + faults.ShortDebugString() + " }\n");
  ASSERT_EQ(plain.jobs.size(), costed.jobs.size());
  std::map<int64_t, JobRecord> before;
  for (const JobRecord& j : plain.jobs) before[j.job_id] = j;
  const std::map<int64_t, JobRecovery> costs = CostsById(costed);
  double lost = 0;
  for (const JobRecord& j : costed.jobs) {
    const JobRecord& b = before.at(j.job_id);
    EXPECT_DOUBLE_EQ(j.wasted_gpu_s, b.wasted_gpu_s) << "job " << j.job_id;
    EXPECT_EQ(j.end_s, b.end_s) << "job " << j.job_id;
    const auto c = costs.find(j.job_id);
    const double lost_s = c == costs.end() ? 0 : c->second.lost_s;
    EXPECT_DOUBLE_EQ(lost_s * j.gpus, j.wasted_gpu_s) << "job " << j.job_id;
    lost += lost_s;
  }
  EXPECT_GT(lost, 0) << "the failures hit running jobs";
}

TEST(RecoveryRun, ACrashedJobLosesWhatItsWastedGpuSecondsSay) {
  config::Faults faults = FaultBlock({"crash:job:0-59@7200+600"});
  faults.mutable_recovery()->set_checkpoint(config::fixed_interval);
  faults.mutable_recovery()->set_checkpoint_interval_s(3600);
  const RunResult r =
      RunConfigText(FaultTestConfig() + "faults { " + faults.ShortDebugString() + " }\n");
  EXPECT_EQ(r.summary.end_reason(), "all jobs finished");
  const std::map<int64_t, JobRecovery> costs = CostsById(r);
  double lost = 0;
  for (const JobRecord& j : r.jobs) {
    const auto c = costs.find(j.job_id);
    const double lost_s = c == costs.end() ? 0 : c->second.lost_s;
    EXPECT_NEAR(lost_s * j.gpus, j.wasted_gpu_s, 1e-6) << "job " << j.job_id;
    lost += lost_s;
  }
  EXPECT_GT(lost, 0) << "the crash hit running jobs";
}

// A job whose actor dies in its first lease, before any checkpoint, still counts the
// interruption and pays its restart.
TEST(RecoveryRun, AJobKilledBeforeItsFirstCheckpointPaysItsRestart) {
  config::Faults faults = FaultBlock({"crash:job:0-9@100+30"});
  faults.mutable_recovery()->set_restart_s(60);
  const RunResult r =
      RunConfigText(FaultTestConfig() + "faults { " + faults.ShortDebugString() + " }\n");
  EXPECT_EQ(r.summary.end_reason(), "all jobs finished");
  const std::map<int64_t, JobRecovery> costs = CostsById(r);
  int hit = 0;
  for (const JobRecord& j : r.jobs) {
    if (j.wasted_gpu_s <= 0) continue;  // not running when it was killed
    ++hit;
    const auto c = costs.find(j.job_id);
    ASSERT_NE(c, costs.end()) << "job " << j.job_id;
    EXPECT_EQ(c->second.interruptions, 1) << "job " << j.job_id;
    EXPECT_GE(c->second.restart_s, 60) << "job " << j.job_id;
  }
  EXPECT_GT(hit, 0) << "the crash hit no job in its first lease";
}

TEST(RecoveryRun, AFailureRollsAJobBackLeasesAndItStillFinishesDeterministically) {
  config::Faults faults = FaultBlock(kFailures);
  faults.mutable_recovery()->set_checkpoint(config::fixed_interval);
  faults.mutable_recovery()->set_checkpoint_interval_s(7200);
  faults.mutable_recovery()->set_restart_s(120);
  const std::string text = FaultTestConfig() + "faults { " + faults.ShortDebugString() + " }\n";
  const RunResult a = RunConfigText(text);
  const RunResult b = RunConfigText(text);
  EXPECT_EQ(a.summary.end_reason(), "all jobs finished");
  double lost = 0, restart = 0;
  for (const JobRecoveryRecord& c : a.job_recovery) {
    lost += c.costs.lost_s;
    restart += c.costs.restart_s;
    // A 7,200 s interval: a failure loses more than the 300 s lease it cut short when the last
    // checkpoint is older, never more than the interval and the write in flight.
    EXPECT_LE(c.costs.lost_s, c.costs.interruptions * 7200.0) << "job " << c.job_id;
  }
  EXPECT_GT(lost, 300) << "work from leases before the failed one was lost";
  EXPECT_GT(restart, 0);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].end_s, b.jobs[i].end_s);
    EXPECT_EQ(a.jobs[i].wasted_gpu_s, b.jobs[i].wasted_gpu_s);
  }
  ASSERT_EQ(a.job_recovery.size(), b.job_recovery.size());
  for (size_t i = 0; i < a.job_recovery.size(); ++i) {
    EXPECT_EQ(a.job_recovery[i].costs.lost_s, b.job_recovery[i].costs.lost_s);
    EXPECT_EQ(a.job_recovery[i].costs.checkpoint_s, b.job_recovery[i].costs.checkpoint_s);
  }
}

}  // namespace
}  // namespace troupe::testing
