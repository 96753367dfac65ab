// Servers lost for good, and crashes that overlap (docs/faults.md). A run that loses servers
// without a restart fails the jobs that need more GPUs than survive, with the reason, and ends;
// servers that come back make jobs wait, not fail. Two crashes of one server, or of the
// scheduler, that overlap restart it once, at the later end: never two schedulers, never a
// server lost because its first replacement was replaced.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "config/config_loader.hpp"
#include "tests/integration/fault_fixture.hpp"

namespace troupe::testing {
namespace {

// The fault tests' cluster; the deadline (about 6 times the run without faults) bounds a run that
// would wait forever.
const std::string kConfig = FaultTestConfig("deadline_s: 3000000");

RunResult RunWithFaults(const std::vector<std::string>& faults) {
  return testing::RunWithFaults(kConfig, faults);
}

InvariantReport Check(const RunResult& r, const std::vector<std::string>& faults) {
  return CheckFaultRun(r, faults);
}

std::map<int64_t, double> RoundStarts(const RunResult& r) {
  std::map<int64_t, double> start;
  for (const RoundRecord& round : r.rounds) start[round.round] = round.start_s;
  return start;
}

TEST(PermanentLoss, JobsThatNoLongerFitFailWithTheReasonAndTheRunEnds) {
  // 4 GPUs survive: every job of more fails, every other one finishes.
  const std::vector<std::string> faults = {"crash:server:1-3@3600"};
  RunResult r = RunWithFaults(faults);
  InvariantReport report = Check(r, faults);
  EXPECT_EQ(r.summary.end_reason(), "all jobs finished");
  int failed = 0;
  for (const JobRecord& j : r.jobs) {
    if (j.gpus <= 4) {
      EXPECT_GE(j.end_s, 0) << "job " << j.job_id << ": " << j.failure;
      continue;
    }
    // Unless it finished before the loss.
    if (j.end_s >= 0 && j.end_s <= 3600) continue;
    ++failed;
    EXPECT_EQ(j.end_s, -1) << "job " << j.job_id;
    EXPECT_EQ(j.failure,
              "needs " + std::to_string(j.gpus) + " GPUs; 4 survive (3 of 4 servers lost for good)")
        << "job " << j.job_id;
  }
  EXPECT_GT(failed, 0) << "the workload has no job of more than 4 GPUs after the loss";
  EXPECT_EQ(report.jobs_failed, failed);
  EXPECT_EQ(report.jobs_finished, 60 - failed);
}

TEST(PermanentLoss, JobsWaitForServersThatComeBack) {
  const std::vector<std::string> faults = {"crash:server:1-3@3600+20000"};
  RunResult r = RunWithFaults(faults);
  EXPECT_EQ(Check(r, faults).jobs_finished, 60);
}

TEST(PermanentLoss, InvariantsRefuseAFailureThatStillFits) {
  std::vector<JobRecord> jobs(1);
  jobs[0].job_id = 0;
  jobs[0].gpus = 8;
  jobs[0].failure = std::string("needs 8 GPUs; 4 survive (3 of 4 ") + kNoLongerFits;
  const std::vector<RoundRecord> rounds;
  const std::vector<LeaseRecord> leases;
  InvariantInput in;
  in.jobs = &jobs;
  in.rounds = &rounds;
  in.leases = &leases;
  in.servers.assign(4, ServerCapacity{4, 16, 200});
  FaultPlan plan;
  ASSERT_TRUE(
      BuildFaultPlan(FaultBlock({"crash:server:3@100"}), 3, FaultUniverse{4, 1, 0, {}}, &plan)
          .ok());
  in.faults = &plan;
  in.end_reason = "all jobs finished";
  // 12 GPUs survive server 3's loss: an 8-GPU job still fits.
  EXPECT_FALSE(CheckRunInvariants(in).ok());
  ASSERT_TRUE(
      BuildFaultPlan(FaultBlock({"crash:server:1-3@100"}), 3, FaultUniverse{4, 1, 0, {}}, &plan)
          .ok());
  EXPECT_TRUE(CheckRunInvariants(in).ok());
}

TEST(PermanentLoss, OverlappingServerCrashesRestartItOnceAtTheLaterEnd) {
  const std::vector<std::string> faults = {"crash:server:1@7200+3600", "crash:server:1@9000+3600"};
  RunResult r = RunWithFaults(faults);
  EXPECT_EQ(Check(r, faults).jobs_finished, 60);
  const std::map<int64_t, double> start = RoundStarts(r);
  bool used_after = false;
  for (const LeaseRecord& l : r.leases) {
    if (l.server != 1) continue;
    EXPECT_FALSE(start.at(l.round) > 7200 && start.at(l.round) < 12600) << "round " << l.round;
    // Its single replacement stays: before, a second one replaced the first, and the first's
    // death took the server out of the plan for the rest of the run.
    used_after |= start.at(l.round) > 20000;
  }
  EXPECT_TRUE(used_after);
  ASSERT_EQ(r.faults.size(), 2u);
  EXPECT_EQ(r.faults[1].effect, "server 1 was down already; back at 12600 s");
}

// Before, the second crash's restart spawned a second scheduler: both planned rounds, and when
// one ended the run the other reported "job N failed" for every job it was told to stop.
TEST(PermanentLoss, OverlappingSchedulerCrashesRestartOneScheduler) {
  const std::string out = FreshDir("two-scheduler-crashes") + "/run";
  const std::string config = FreshDir("two-scheduler-config") + "/config.textproto";
  WriteFile(config, kConfig);
  ProcessResult p =
      RunTroupe({"run", config, "--out", out, "--quiet", "--fault", "crash:scheduler@7200+3600",
                 "--fault", "crash:scheduler@9000+3600"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const std::string log = p.out + p.err;
  const std::regex restarted("scheduler: restarted at (\\d+) s");
  std::vector<std::string> at;
  for (std::sregex_iterator it(log.begin(), log.end(), restarted), end; it != end; ++it) {
    at.push_back((*it)[1]);
  }
  EXPECT_EQ(at, std::vector<std::string>{"12600"}) << log;
  EXPECT_EQ(log.find("failed:"), std::string::npos) << log;
  const auto jobs = ReadCsv(out + "/jobs.csv");
  ASSERT_EQ(jobs.size(), 60u);
  for (const auto& j : jobs) {
    auto failure = j.find("failure");  // an empty last field may have no entry
    EXPECT_TRUE(failure == j.end() || failure->second.empty()) << "job " << j.at("job_id");
    EXPECT_NE(j.at("end_s"), "-1.000") << "job " << j.at("job_id");
  }
  const auto faults = ReadCsv(out + "/faults.csv");
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[1].at("effect"), "the scheduler was down already; back at 12600 s");
}

}  // namespace
}  // namespace troupe::testing
