// What server failures cost a run (docs/failures.md, "What failures cost"): every server that went
// down is recorded once with its cause, the jobs it interrupted add up to the interruptions the
// jobs themselves counted, the GPU-hours under repair are each server's GPUs times its repair, the
// by-cause table adds up, and interruptions.csv holds the same rows; a run without failures has
// neither.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runner/cluster/failure_records.hpp"
#include "tests/integration/fault_fixture.hpp"

namespace troupe::testing {
namespace {

// gpu on server 1 at 3671 s (repaired after 1800 s), host on server 2 at 7333 s (3600 s), and a
// switch at 14521 s: FaultTestConfig has no fabric, so a switch takes out the one server named.
// None falls on a round's boundary, where the round that ends and the one that starts would both
// claim it.
constexpr char kTrace[] =
    "time_s,component,server,repair_s\n"
    "3671,gpu,1,1800\n"
    "7333,host,2,3600\n"
    "14521,switch,0,900\n";

// With faults.recovery, so that each job counts the failures that hit it: the engine's count of the
// jobs a failure interrupts and the jobs' own must agree.
std::string ConfigReplaying(const std::string& trace_path) {
  return FaultTestConfig() + "faults { failure_trace: \"" + trace_path + "\" recovery {} }\n";
}

RunResult RunTrace(const std::string& name, const std::string& rows) {
  const std::string dir = FreshDir(name);
  WriteFile(dir + "/failures.csv", rows);
  return RunConfigText(ConfigReplaying(dir + "/failures.csv"));
}

TEST(FailureCostRun, EachFailedServerIsRecordedOnceWithItsCauseAndTheJobsItInterrupted) {
  const RunResult r = RunTrace("failure-cost", kTrace);
  ASSERT_EQ(r.servers_down.size(), 3u);
  const struct {
    double at_s;
    int32_t server;
    const char* cause;
    double back_s;
  } expected[] = {{3671, 1, "failure:gpu", 5471},
                  {7333, 2, "failure:host", 10933},
                  {14521, 0, "failure:switch", 15421}};
  int32_t jobs_hit = 0;
  for (size_t i = 0; i < 3; ++i) {
    const ServerDownRecord& d = r.servers_down[i];
    EXPECT_EQ(d.at_s, expected[i].at_s);
    EXPECT_EQ(d.server, expected[i].server);
    EXPECT_EQ(d.cause, expected[i].cause);
    EXPECT_EQ(d.restart_at_s, expected[i].back_s);
    EXPECT_EQ(d.gpus, 4);
    EXPECT_LE(d.jobs_hit, d.gpus) << "at most one job a GPU";
    jobs_hit += d.jobs_hit;
  }
  EXPECT_GT(jobs_hit, 0) << "the trace's times fall while jobs run: a test that can fail";
  ASSERT_TRUE(r.summary.has_recovery());
  EXPECT_EQ(jobs_hit, r.summary.recovery().interruptions()) << "each interruption counted once";
  ASSERT_TRUE(r.summary.has_failures());
  const summaries::FailureSummary& f = r.summary.failures();
  EXPECT_EQ(f.servers_down(), 3);
  EXPECT_EQ(f.jobs_hit(), jobs_hit);
  // Each server's 4 GPUs under repair for 1800, 3600 and 900 s.
  EXPECT_NEAR(f.repair_gpu_hours(), 4 * (1800.0 + 3600.0 + 900.0) / 3600, 1e-9);
  ASSERT_EQ(f.by_cause_size(), 3);
  double by_cause_repair = 0;
  for (const summaries::FailureCause& c : f.by_cause()) {
    EXPECT_EQ(c.servers_down(), 1) << c.cause();
    by_cause_repair += c.repair_gpu_hours();
  }
  EXPECT_NEAR(by_cause_repair, f.repair_gpu_hours(), 1e-9);
}

TEST(FailureCostRun, AFailureAtARoundsBoundaryInterruptsNoJob) {
  // 3600 s starts a round (and ends the one before): the old leases are over, the new have not
  // begun, and the jobs count no interruption either.
  const RunResult r = RunTrace("failure-cost-boundary",
                               "time_s,component,server,repair_s\n"
                               "3600,gpu,1,1800\n"
                               "3671,gpu,2,1800\n");
  ASSERT_EQ(r.servers_down.size(), 2u);
  bool boundary = false;
  for (const RoundRecord& round : r.rounds) boundary |= round.start_s == 3600;
  ASSERT_TRUE(boundary) << "3600 s is no round's start: the test would prove nothing";
  EXPECT_EQ(r.servers_down[0].jobs_hit, 0);
  EXPECT_GT(r.servers_down[1].jobs_hit, 0);
  EXPECT_EQ(r.summary.failures().jobs_hit(), r.summary.recovery().interruptions());
}

TEST(FailureCostRun, AServerStillDownAtTheEndCountsUnderRepairUntilThen) {
  // Repaired long after the last job ends: its repair is cut at the run's end.
  const RunResult r = RunTrace("failure-cost-late",
                               "time_s,component,server,repair_s\n"
                               "3600,hbm,3,100000000\n");
  ASSERT_EQ(r.servers_down.size(), 1u);
  const double end_s = r.summary.makespan_s();
  ASSERT_LT(3600 + 1e8, 1e9);
  ASSERT_LT(end_s, 3600 + 1e8);
  EXPECT_NEAR(r.summary.failures().repair_gpu_hours(), 4 * (end_s - 3600) / 3600, 1e-9);
  EXPECT_EQ(r.summary.failures().by_cause(0).mean_repair_h(), 0) << "none came back in the run";
}

TEST(FailureCostRun, InterruptionsCsvHoldsOneRowAFailedServer) {
  const RunResult r = RunTrace("failure-cost-csv", kTrace);
  const std::string csv = InterruptionsCsv(r.servers_down);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), kInterruptionsCsvHeader);
  EXPECT_NE(csv.find("\n3671.000,1,4,failure:gpu,5471.000,"), std::string::npos) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
}

TEST(FailureCostRun, ARunWithoutServerFailuresHasNoFailureRecords) {
  const RunResult r = RunConfigText(FaultTestConfig());
  EXPECT_TRUE(r.servers_down.empty());
  EXPECT_FALSE(r.summary.has_failures());
  // A job crash is no server failure either.
  const RunResult crashed = RunWithFaults(FaultTestConfig(), {"crash:job:3@20000+600"});
  EXPECT_TRUE(crashed.servers_down.empty());
}

TEST(FailureCostRun, ASecondCrashThatPutsOffTheRepairIsCountedToTheReturn) {
  // Down at 7200 s for 600 s; a second crash at 7400 s keeps it down until 9400 s.
  const RunResult r =
      RunWithFaults(FaultTestConfig(), {"crash:server:2@7200+600", "crash:server:2@7400+2000"});
  ASSERT_EQ(r.servers_down.size(), 1u) << "one outage";
  EXPECT_EQ(r.servers_down[0].restart_at_s, 9400);
  EXPECT_NEAR(r.summary.failures().repair_gpu_hours(), 4 * 2200.0 / 3600, 1e-9);
}

TEST(FailureCostRun, ADeclaredCrashIsAFault) {
  const RunResult r = RunWithFaults(FaultTestConfig(), {"crash:server:2@7200+600"});
  ASSERT_EQ(r.servers_down.size(), 1u);
  EXPECT_EQ(r.servers_down[0].cause, "fault");
  EXPECT_EQ(r.servers_down[0].restart_at_s, 7800);
}

TEST(FailureCostRun, AServerThatFailsWhileTheSchedulerIsDownIsRecordedFromItsFailure) {
  // The scheduler is down from 1000 s to 1600 s; server 2 fails at 1200 s and is back at 1500 s,
  // before any scheduler could see it down.
  const std::vector<std::string> faults = {"crash:scheduler@1000+600", "crash:server:2@1200+300"};
  const RunResult r = RunWithFaults(FaultTestConfig(), faults);
  CheckFaultRun(r, faults);
  ASSERT_EQ(r.servers_down.size(), 1u);
  const ServerDownRecord& d = r.servers_down[0];
  EXPECT_EQ(d.at_s, 1200);
  EXPECT_EQ(d.server, 2);
  EXPECT_EQ(d.gpus, 4);
  EXPECT_EQ(d.cause, "fault");
  EXPECT_EQ(d.restart_at_s, 1500);
  EXPECT_EQ(d.jobs_hit, 0) << "no scheduler cut its leases: they ran to their end";
  EXPECT_NEAR(r.summary.failures().repair_gpu_hours(), 4 * 300.0 / 3600, 1e-9);
}

TEST(FailureCostRun, AServerStillDownWhenTheSchedulerRestartsIsRecordedOnce) {
  // Server 2 fails at 1200 s, while the scheduler is down, and is back at 2100 s, after the
  // restarted scheduler (1600 s) found it down.
  const std::vector<std::string> faults = {"crash:scheduler@1000+600", "crash:server:2@1200+900"};
  const RunResult r = RunWithFaults(FaultTestConfig(), faults);
  CheckFaultRun(r, faults);
  ASSERT_EQ(r.servers_down.size(), 1u);
  EXPECT_EQ(r.servers_down[0].at_s, 1200);
  EXPECT_EQ(r.servers_down[0].cause, "fault");
  EXPECT_EQ(r.servers_down[0].restart_at_s, 2100);
}

TEST(FailureCostRun, AServerThatFailsAtTheInstantTheSchedulerDiesIsRecordedOnce) {
  // The server's crash listed first, then the scheduler's, and the other way round.
  for (const std::vector<std::string>& faults :
       {std::vector<std::string>{"crash:server:2@1000+300", "crash:scheduler@1000+600"},
        std::vector<std::string>{"crash:scheduler@1000+600", "crash:server:2@1000+300"}}) {
    const RunResult r = RunWithFaults(FaultTestConfig(), faults);
    CheckFaultRun(r, faults);
    ASSERT_EQ(r.servers_down.size(), 1u) << faults[0];
    EXPECT_EQ(r.servers_down[0].at_s, 1000) << faults[0];
    EXPECT_EQ(r.servers_down[0].restart_at_s, 1300) << faults[0];
  }
}

}  // namespace
}  // namespace troupe::testing
