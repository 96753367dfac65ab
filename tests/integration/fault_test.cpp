// One test per fault kind in cluster runs (docs/faults.md). Each checks the run invariants
// (faults/run_invariants.hpp: every job finishes once or fails with a reason, capacity is never
// exceeded, nothing dead is leased after the crash) and what the fault must do, against the same
// run without faults where that says more: jobs the fault did not touch keep their JCT, and
// faults that lose nothing (duplicates, delays) change no JCT at all.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "config/config_loader.hpp"
#include "tests/integration/fault_fixture.hpp"

namespace troupe::testing {
namespace {

const std::string kConfig = FaultTestConfig();

RunResult RunWithFaults(const std::vector<std::string>& faults) {
  return testing::RunWithFaults(kConfig, faults);
}

const RunResult& Baseline() {
  static const RunResult* baseline = new RunResult(RunConfigText(kConfig));
  return *baseline;
}

InvariantReport Check(const RunResult& r, const std::vector<std::string>& faults) {
  return CheckFaultRun(r, faults);
}

std::map<int64_t, JobRecord> ById(const RunResult& r) {
  std::map<int64_t, JobRecord> out;
  for (const JobRecord& j : r.jobs) out[j.job_id] = j;
  return out;
}

// Jobs that finished before `t` cannot have been touched by a fault at t.
void ExpectSameJctBefore(const RunResult& r, double t) {
  std::map<int64_t, JobRecord> base = ById(Baseline());
  int compared = 0;
  for (const JobRecord& j : r.jobs) {
    const JobRecord& b = base.at(j.job_id);
    if (b.end_s >= 0 && b.end_s <= t) {
      EXPECT_EQ(j.jct_s, b.jct_s) << "job " << j.job_id;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0);
}

TEST(Faults, BaselineHoldsTheInvariants) {
  InvariantReport report = Check(Baseline(), {});
  EXPECT_EQ(report.jobs_finished, 60);
  EXPECT_EQ(Baseline().summary.end_reason(), "all jobs finished");
}

TEST(Faults, CrashedServerLeavesThePlanAndComesBack) {
  const std::vector<std::string> faults = {"crash:server:1@14500+3600"};
  RunResult r = RunWithFaults(faults);
  InvariantReport report = Check(r, faults);
  EXPECT_EQ(report.jobs_finished, 60);
  EXPECT_GT(r.summary.wasted_gpu_hours(), 0) << "leases on the server were lost mid-round";
  bool used_after_restart = false;
  std::map<int64_t, double> start;
  for (const RoundRecord& round : r.rounds) start[round.round] = round.start_s;
  for (const LeaseRecord& l : r.leases)
    used_after_restart |= l.server == 1 && start[l.round] >= 18100;
  EXPECT_TRUE(used_after_restart);
  ExpectSameJctBefore(r, 14500);
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].recovered_s, 18100);
}

TEST(Faults, ServerThatNeverReturnsOnlyCostsCapacity) {
  const std::vector<std::string> faults = {"crash:server:0@3000"};
  RunResult r = RunWithFaults(faults);
  EXPECT_EQ(Check(r, faults).jobs_finished, 60);
}

TEST(Faults, GangJobLosesEveryGpuWhenOneServerDies) {
  // One 8-GPU job over two servers; server 1 dies 100 s into the first round.
  const std::string trace = FreshDir("gang") + "/trace.csv";
  WriteFile(trace, "job_id,model,arrival_s,duration_s,gpus\n0,res18,0,3600,8\n");
  RunResult r = RunConfigText(
      "cluster { servers { name: \"s\" count: 3 gpus: 4 cpus: 16 memory_gb: 200 } }\n"
      "workload { trace_file: \"" +
      trace +
      "\" }\n"
      "run { lease_log: true }\n"
      "faults { fault { kind: crash target: \"server:1\" at_s: 100 } }\n");
  ASSERT_EQ(r.jobs.size(), 1u);
  const JobRecord& job = r.jobs[0];
  EXPECT_EQ(job.wasted_gpu_s, 8 * 100.0) << "all 8 GPUs of the gang lease, for 100 s";
  EXPECT_GE(job.end_s, 0);
  for (const LeaseRecord& l : r.leases) EXPECT_NE(l.server, 1) << "round " << l.round;
}

// A job that, without faults, is running at t and for a while after.
int64_t JobRunningAt(double t) {
  for (const JobRecord& j : Baseline().jobs) {
    if (j.start_s >= 0 && j.start_s < t && j.end_s > t + 3000) return j.job_id;
  }
  ADD_FAILURE() << "no job runs at " << t;
  return 0;
}

TEST(Faults, CrashedJobResumesFromItsCheckpoint) {
  const int64_t id = JobRunningAt(20000);
  const std::vector<std::string> faults = {"crash:job:" + std::to_string(id) + "@20000+900"};
  RunResult r = RunWithFaults(faults);
  Check(r, faults);
  const JobRecord job = ById(r).at(id);
  EXPECT_EQ(job.restarts, 1);
  EXPECT_GE(job.end_s, 0);
  EXPECT_GE(job.jct_s, ById(Baseline()).at(id).jct_s);
  EXPECT_GT(job.wasted_gpu_s, 0) << "the lease it died in";
  ExpectSameJctBefore(r, 20000);
}

// A crash at the very start of a round: the workload answers the round's arrivals late, the
// request is sent again and both answers come; the round is planned once and the run ends.
TEST(Faults, ACrashAtARoundsStartIsPlannedOnceAndTheRunEnds) {
  const int64_t id = JobRunningAt(19800);  // 19800 s: the start of round 66
  const std::vector<std::string> faults = {"crash:job:" + std::to_string(id) + "@19800+100"};
  RunResult r = RunWithFaults(faults);
  Check(r, faults);
  const JobRecord job = ById(r).at(id);
  EXPECT_EQ(job.restarts, 1);
  EXPECT_GE(job.end_s, 0);
  for (size_t i = 1; i < r.rounds.size(); ++i) {
    EXPECT_GT(r.rounds[i].start_s, r.rounds[i - 1].start_s) << "round " << r.rounds[i].round;
  }
}

TEST(Faults, CrashedJobWithoutRestartFailsWithAReason) {
  const int64_t id = JobRunningAt(20000);
  const std::vector<std::string> faults = {"crash:job:" + std::to_string(id) + "@20000"};
  RunResult r = RunWithFaults(faults);
  InvariantReport report = Check(r, faults);
  const JobRecord job = ById(r).at(id);
  EXPECT_EQ(job.end_s, -1);
  EXPECT_NE(job.failure.find("crash job:" + std::to_string(id)), std::string::npos) << job.failure;
  EXPECT_EQ(report.jobs_failed, 1);
  EXPECT_EQ(report.jobs_finished, 59);
}

// The first job to arrive after `t`.
int64_t JobArrivingAfter(double t) {
  for (const JobRecord& j : Baseline().jobs) {
    if (j.arrival_s > t) return j.job_id;
  }
  ADD_FAILURE() << "no job arrives after " << t;
  return 0;
}

// A job gets its actor when it is first placed: a crash before that kills nothing, and
// faults.csv says so rather than claiming a kill.
TEST(Faults, CrashOfAJobNotYetArrivedKillsNothingAndSaysSo) {
  const int64_t id = JobArrivingAfter(20000);
  const std::vector<std::string> faults = {"crash:job:" + std::to_string(id) + "@20000"};
  RunResult r = RunWithFaults(faults);
  Check(r, faults);
  const JobRecord job = ById(r).at(id);
  EXPECT_GE(job.end_s, 0);
  EXPECT_EQ(job.restarts, 0);
  EXPECT_EQ(job.failure, "");
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].effect, "nothing to kill: the job had no actor (not placed yet, or ended)");
  EXPECT_EQ(r.faults[0].recovered_s, -1);
}

// A crash over a range names how many of its jobs it found running, and which.
TEST(Faults, CrashOverJobsSomeNotYetPlacedCountsTheKilled) {
  const int64_t running = JobRunningAt(20000);
  const int64_t later = JobArrivingAfter(20000);
  ASSERT_LT(running, later);
  const std::vector<std::string> faults = {"crash:job:" + std::to_string(running) + "-" +
                                           std::to_string(later) + "@20000+900"};
  RunResult r = RunWithFaults(faults);
  Check(r, faults);
  EXPECT_EQ(ById(r).at(running).restarts, 1);
  EXPECT_EQ(ById(r).at(later).restarts, 0);
  ASSERT_EQ(r.faults.size(), 1u);
  const std::string& effect = r.faults[0].effect;
  EXPECT_EQ(effect.rfind("killed the actors of ", 0), 0u) << effect;
  EXPECT_NE(effect.find(std::to_string(running)), std::string::npos) << effect;
  EXPECT_NE(effect.find("the others had none"), std::string::npos) << effect;
  EXPECT_EQ(r.faults[0].recovered_s, 20900);
}

TEST(Faults, RestartedSchedulerForgetsNoJobAndRunsNoneTwice) {
  const std::vector<std::string> faults = {"crash:scheduler@20100+1000"};
  RunResult r = RunWithFaults(faults);
  InvariantReport report = Check(r, faults);
  EXPECT_EQ(report.jobs_finished, 60);
  // No round between the crash and the resumption at the next boundary after 21100 s.
  for (const RoundRecord& round : r.rounds) {
    EXPECT_FALSE(round.start_s > 20100 && round.start_s < 21300) << "round at " << round.start_s;
  }
  ExpectSameJctBefore(r, 20100);
}

TEST(Faults, PartitionedServerGetsNoWorkUntilItHeals) {
  const std::vector<std::string> faults = {"partition:server:2@9000+3000,peer=scheduler"};
  RunResult r = RunWithFaults(faults);
  EXPECT_EQ(Check(r, faults).jobs_finished, 60);
  EXPECT_GT(r.summary.messages_dropped(), 0u);
  std::map<int64_t, double> start;
  for (const RoundRecord& round : r.rounds) start[round.round] = round.start_s;
  for (const LeaseRecord& l : r.leases) {
    EXPECT_FALSE(l.server == 2 && start[l.round] >= 9000 && start[l.round] < 12000)
        << "round " << l.round;
  }
}

TEST(Faults, DroppedMessagesAreAskedForAgain) {
  const std::vector<std::string> faults = {"drop:*@0,p=0.2"};
  RunResult r = RunWithFaults(faults);
  EXPECT_EQ(Check(r, faults).jobs_finished, 60);
  EXPECT_GT(r.summary.messages_dropped(), 100u);
}

TEST(Faults, RequestsDroppedOnTheirWayAreAskedAgain) {
  // The scheduler's requests (arrivals, recovery) cross the same faulty network as any message.
  const std::vector<std::string> faults = {"drop:scheduler->workload@0,p=0.5"};
  RunResult r = RunWithFaults(faults);
  EXPECT_EQ(Check(r, faults).jobs_finished, 60);
  EXPECT_GT(r.summary.messages_dropped(), 10u);
}

TEST(Faults, AWorkloadCutOffForGoodEndsTheRunWithTheReason) {
  RunResult r = RunWithFaults({"drop:scheduler->workload@0,p=1"});
  EXPECT_NE(r.summary.end_reason().find("the workload is unreachable"), std::string::npos)
      << r.summary.end_reason();
  EXPECT_LT(r.jobs.size(), 60u);
}

TEST(Faults, DuplicatesAndDelaysChangeNoJct) {
  for (const std::string fault : {"duplicate:*@0,p=0.3", "delay:job->scheduler@0,delay=20"}) {
    RunResult r = RunWithFaults({fault});
    Check(r, {fault});
    std::map<int64_t, JobRecord> base = ById(Baseline());
    for (const JobRecord& j : r.jobs) EXPECT_EQ(j.jct_s, base.at(j.job_id).jct_s) << fault;
    EXPECT_GT(r.summary.messages_duplicated() + r.summary.messages_delayed(), 0u) << fault;
  }
}

TEST(Faults, SlowServerStretchesTheJobsOnIt) {
  const std::vector<std::string> faults = {"slow:server:*@0,x=0.5"};
  RunResult r = RunWithFaults(faults);
  Check(r, faults);
  EXPECT_GT(r.summary.jct_mean_s(), Baseline().summary.jct_mean_s() * 1.3);
}

TEST(Faults, RandomScheduleReplaysByteForByte) {
  const std::string text = kConfig +
                           "faults { random { count: 6 end_s: 40000 mean_duration_s: 1200 "
                           "kinds: crash kinds: slow kinds: drop kinds: partition } }\n";
  const std::string a = FreshDir("replay-a"), b = FreshDir("replay-b");
  RunResult ra = RunConfigText(text, {"run.out_dir=" + a + "/run"});
  RunResult rb = RunConfigText(text, {"run.out_dir=" + b + "/run"});
  for (const char* file : {"jobs.csv", "rounds.csv", "leases.csv", "faults.csv"}) {
    EXPECT_EQ(ReadFile(a + "/run/" + file), ReadFile(b + "/run/" + file)) << file;
  }
  EXPECT_EQ(ra.faults.size(), 6u);
}

}  // namespace
}  // namespace troupe::testing
