// Runs with spare servers (faults.recovery.spare_servers, docs/faults.md "Recovery"): a job whose
// server dies mid-round restarts at once on the spare instead of at the next round, and so ends
// sooner; the spare pool is never placed on (the failed server, once back, is the pool's spare);
// no server is over capacity; two runs write the same records; too many spares are refused.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// One 8-GPU job on three 4-GPU servers; server 1 dies 100 s into the first round, back at 700 s.
// `faults` are more faults.
RunResult RunGangJob(int spares, const std::string& faults = "") {
  const std::string trace = FreshDir("spares") + "/trace.csv";
  WriteFile(trace, "job_id,model,arrival_s,duration_s,gpus\n0,res18,0,3450,8\n");
  return RunConfigText(
      "cluster { servers { name: \"s\" count: 3 gpus: 4 cpus: 16 memory_gb: 200 } }\n"
      "workload { trace_file: \"" +
      trace +
      "\" }\n"
      "run { lease_log: true }\n"
      "faults { fault { kind: crash target: \"server:1\" at_s: 100 duration_s: 600 }\n" +
      faults + "  recovery { restart_s: 60 spare_servers: " + std::to_string(spares) + " } }\n");
}

TEST(SpareServersRun, AJobRestartsAtOnceOnTheSpareAndEndsSooner) {
  const RunResult spare = RunGangJob(1);
  const RunResult none = RunGangJob(0);
  ASSERT_EQ(spare.jobs.size(), 1u);
  ASSERT_EQ(none.jobs.size(), 1u);
  std::set<int32_t> first_round;
  for (const LeaseRecord& l : spare.leases) {
    EXPECT_NE(l.server, 1) << "the failed server, back, is the spare: never placed on (round "
                           << l.round << ")";
    if (l.round == 0) first_round.insert(l.server);
  }
  // The round the failure cut: its lease ran on to the round's end on server 0 and the spare.
  EXPECT_EQ(first_round, (std::set<int32_t>{0, 2}));
  ASSERT_EQ(spare.job_recovery.size(), 1u);
  EXPECT_EQ(spare.job_recovery[0].costs.interruptions, 1);
  EXPECT_GE(spare.job_recovery[0].costs.restart_s, 60) << "it paid its restart";
  // Held from its start to its end: its only downtime is the restart, inside the lease. Without
  // the spare it was off the cluster from the failure to the next round, 200 s.
  const auto held_s = [](const RunResult& r) {
    return r.jobs[0].gpu_seconds / 8 + r.job_recovery[0].costs.cut_short_s;
  };
  EXPECT_DOUBLE_EQ(held_s(spare), spare.jobs[0].end_s);
  ASSERT_EQ(none.job_recovery.size(), 1u);
  EXPECT_DOUBLE_EQ(held_s(none), none.jobs[0].end_s - 200);
  EXPECT_GE(spare.jobs[0].end_s, 0);
  EXPECT_LT(spare.jobs[0].end_s, none.jobs[0].end_s)
      << "restarting at once, not at the next round, ends sooner";
}

TEST(SpareServersRun, NoServerIsOverCapacityAndTwoRunsWriteTheSameRecords) {
  const RunResult a = RunGangJob(1);
  const RunResult b = RunGangJob(1);
  std::map<std::pair<int64_t, int32_t>, int> gpus;
  for (const LeaseRecord& l : a.leases) {
    gpus[{l.round, l.server}] += static_cast<int>(l.gpu_ids.size());
  }
  for (const auto& [where, n] : gpus) {
    EXPECT_LE(n, 4) << "round " << where.first << " server " << where.second;
  }
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].end_s, b.jobs[i].end_s);
    EXPECT_EQ(a.jobs[i].gpu_seconds, b.jobs[i].gpu_seconds);
    EXPECT_EQ(a.jobs[i].wasted_gpu_s, b.jobs[i].wasted_gpu_s);
  }
  EXPECT_EQ(a.leases.size(), b.leases.size());
}

// The scheduler tells the job of the loss before it relets the lease on the spare, but the loss
// comes straight from the scheduler and the relet through the spare's server: late messages can
// bring either first, and late. The lease is cut at the failure all the same, and costs the same.
TEST(SpareServersRun, ALateLossCostsTheLeaseItCutAtTheFailureWhicheverComesFirst) {
  const RunResult prompt = RunGangJob(1);
  ASSERT_EQ(prompt.jobs.size(), 1u);
  EXPECT_EQ(prompt.jobs[0].wasted_gpu_s, 8 * 100) << "the lease cut after 100 s of 8 GPUs";
  const std::string delay = "fault { kind: delay at_s: 90 duration_s: 20 ";
  for (const std::string& late : {
           // the relet first
           delay + "target: \"scheduler->job\" delay_s: 30 }\n",
           // the loss first, 30 s late on average, the relet later still
           delay + "target: \"scheduler->job\" delay_s: 30 }\n" + delay +
               "target: \"server->job\" delay_s: 300 }\n",
       }) {
    const RunResult r = RunGangJob(1, late);
    ASSERT_EQ(r.jobs.size(), 1u) << late;
    EXPECT_EQ(r.jobs[0].wasted_gpu_s, prompt.jobs[0].wasted_gpu_s) << late;
    EXPECT_EQ(r.jobs[0].end_s, prompt.jobs[0].end_s) << late;
    ASSERT_EQ(r.job_recovery.size(), 1u) << late;
    const JobRecovery& costs = r.job_recovery[0].costs;
    EXPECT_EQ(costs.interruptions, 1) << late;
    EXPECT_EQ(costs.lost_s, prompt.job_recovery[0].costs.lost_s) << late;
    EXPECT_EQ(costs.restart_s, prompt.job_recovery[0].costs.restart_s) << late;
    EXPECT_EQ(costs.cut_short_s, prompt.job_recovery[0].costs.cut_short_s) << late;
  }
}

TEST(SpareServersRun, SparesThatLeaveNoServerToPlaceOnAreRefused) {
  const std::string dir = FreshDir("too-many-spares");
  const std::string config = dir + "/config.textproto";
  WriteFile(config,
            "cluster { servers { name: \"s\" count: 3 gpus: 4 cpus: 16 memory_gb: 200 } }\n"
            "workload { generator { num_jobs: 5 } }\n"
            "faults { recovery { spare_servers: 3 } }\n");
  const ProcessResult r = RunTroupe({"run", config, "--out", dir + "/out"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("faults.recovery.spare_servers: 3 spares leave none of the cluster's 3 "
                       "servers to place jobs"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace troupe::testing
