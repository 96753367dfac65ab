// Runs that replay a trace's own job failures (workload.replay_job_failures, docs/failures.md
// "Failures from a trace"): a job the trace records as failed runs as long as it ran there, then
// fails with the trace's state as its reason; a Philly job whose log holds three attempts crashes
// after each of the first two attempts' running time and restarts, losing what the checkpoint
// rule says (every lease's end, or faults.recovery's interval); jobs that did not fail, and runs
// without the field, are left as they were.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

std::string WriteFile(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// One server of 8 GPUs, FIFO, 300 s rounds, the trace at `path`; `extra` is appended.
std::string Config(const std::string& path, bool replay, const std::string& extra = "") {
  return "cluster { servers { name: \"s\" count: 1 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
         "workload { trace_file: \"" +
         path + "\" replay_job_failures: " + (replay ? "true" : "false") +
         " }\n"
         "scheduler { policy: fifo mechanism: proportional round_s: 300 }\n"
         "run { seed: 1 }\n" +
         extra;
}

std::map<int64_t, JobRecord> ById(const RunResult& r) {
  std::map<int64_t, JobRecord> jobs;
  for (const JobRecord& j : r.jobs) jobs[j.job_id] = j;
  return jobs;
}

// Acme's format: a job that completed and one that FAILED after the same 3,000 s, and one that
// was CANCELLED (ended by its user: not a failure), on 1, 2 and 1 GPUs.
const char kAcme[] =
    "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,"
    "queue,gpu_time\n"
    "1,u1,1,1,8,Other,COMPLETED,2023-03-01 00:00:00+08:00,2023-03-01 00:00:00+08:00,"
    "2023-03-01 00:50:00+08:00,3000,0,3000\n"
    "2,u1,1,2,8,Other,FAILED,2023-03-01 00:00:10+08:00,2023-03-01 00:00:10+08:00,"
    "2023-03-01 00:50:10+08:00,3000,0,6000\n"
    "3,u2,1,1,8,Other,CANCELLED,2023-03-01 00:00:20+08:00,2023-03-01 00:00:20+08:00,"
    "2023-03-01 00:20:20+08:00,1200,0,1200\n";

TEST(TraceFailureRun, AFailedAcmeJobFailsAfterItsRunningTimeWithTheTracesState) {
  const std::string path = WriteFile(FreshDir("acme-failures"), "trace_seren.csv", kAcme);
  const RunResult plain = RunConfigText(Config(path, false));
  const RunResult replayed = RunConfigText(Config(path, true));
  EXPECT_EQ(replayed.summary.end_reason(), "all jobs finished");
  const std::map<int64_t, JobRecord> before = ById(plain), after = ById(replayed);
  ASSERT_EQ(after.size(), 3u);
  for (const auto& [id, job] : after) {
    SCOPED_TRACE("job " + std::to_string(id));
    const JobRecord& b = before.at(id);
    // The same running time, to the round: what it held and for how many rounds.
    EXPECT_EQ(job.rounds_run, b.rounds_run);
    EXPECT_EQ(job.gpu_seconds, b.gpu_seconds);
    EXPECT_EQ(job.wasted_gpu_s, 0);
    EXPECT_TRUE(b.failure.empty());
    EXPECT_GT(b.end_s, 0);
  }
  EXPECT_EQ(after.at(1).failure, "failed in the trace: FAILED");  // ids follow submission order
  EXPECT_EQ(after.at(1).end_s, -1);
  EXPECT_EQ(after.at(0).end_s, before.at(0).end_s);  // COMPLETED: as without the field
  EXPECT_EQ(after.at(2).end_s, before.at(2).end_s);  // CANCELLED: ends after its running time
  EXPECT_TRUE(after.at(2).failure.empty());
  EXPECT_EQ(replayed.summary.jobs_failed(), 1);
}

// Philly's job log: one job whose first two attempts crashed after 1,000 s each and whose third
// ran 3,000 s; and one whose only attempt Failed after 900 s.
const char kPhilly[] = R"([
  {"jobid": "application_1", "status": "Pass", "submitted_time": "2017-10-07 00:00:00",
   "attempts": [
     {"start_time": "2017-10-07 00:00:00", "end_time": "2017-10-07 00:16:40",
      "detail": [{"ip": "m1", "gpus": ["gpu0"]}]},
     {"start_time": "2017-10-07 00:20:00", "end_time": "2017-10-07 00:36:40",
      "detail": [{"ip": "m2", "gpus": ["gpu3"]}]},
     {"start_time": "2017-10-07 00:40:00", "end_time": "2017-10-07 01:30:00",
      "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}]},
  {"jobid": "application_2", "status": "Failed", "submitted_time": "2017-10-07 00:00:30",
   "attempts": [
     {"start_time": "2017-10-07 00:01:00", "end_time": "2017-10-07 00:16:00",
      "detail": [{"ip": "m3", "gpus": ["gpu0", "gpu1"]}]}]}
])";

TEST(TraceFailureRun, APhillyJobWithThreeAttemptsRestartsTwiceLosingSinceItsCheckpoint) {
  const std::string path = WriteFile(FreshDir("philly-attempts"), "cluster_job_log", kPhilly);
  // Checkpoints every 600 s of training, free to write and read: each crash, 1,000 s into its
  // attempt (100 s into its fourth lease), loses the 400 s since the checkpoint at 600 s.
  const RunResult r = RunConfigText(
      Config(path, true,
             "faults { recovery { checkpoint: fixed_interval checkpoint_interval_s: 600 "
             "state_factor: 0 } }\n"));
  EXPECT_EQ(r.summary.end_reason(), "all jobs finished");
  const std::map<int64_t, JobRecord> jobs = ById(r);
  ASSERT_EQ(jobs.size(), 2u);
  std::map<int64_t, JobRecovery> costs;
  for (const JobRecoveryRecord& c : r.job_recovery) costs[c.job_id] = c.costs;
  EXPECT_EQ(costs[0].interruptions, 2);
  EXPECT_DOUBLE_EQ(costs[0].lost_s, 800);
  EXPECT_DOUBLE_EQ(jobs.at(0).wasted_gpu_s, 800);
  EXPECT_TRUE(jobs.at(0).failure.empty());
  EXPECT_GT(jobs.at(0).end_s, 0);
  EXPECT_EQ(costs[1].interruptions, 0);
  EXPECT_EQ(jobs.at(1).failure, "failed in the trace: Failed");
  EXPECT_EQ(jobs.at(1).wasted_gpu_s, 0);
}

TEST(TraceFailureRun, WithoutRecoveryEachCrashLosesTheLeaseItCutShort) {
  const std::string path = WriteFile(FreshDir("philly-leases"), "cluster_job_log", kPhilly);
  const RunResult plain = RunConfigText(Config(path, false));
  const RunResult r = RunConfigText(Config(path, true));
  const std::map<int64_t, JobRecord> before = ById(plain), after = ById(r);
  // Each crash comes 100 s into a lease; the work of the leases before it was kept.
  EXPECT_DOUBLE_EQ(after.at(0).wasted_gpu_s, 200);
  EXPECT_TRUE(after.at(0).failure.empty());
  // Two crashes, each losing 100 s and the rest of its round: two rounds later than without.
  EXPECT_EQ(after.at(0).end_s, before.at(0).end_s + 600);
  EXPECT_EQ(before.at(0).wasted_gpu_s, 0);
}

TEST(TraceFailureRun, TheSameConfigGivesTheSameRecords) {
  const std::string path = WriteFile(FreshDir("philly-twice"), "cluster_job_log", kPhilly);
  const RunResult a = RunConfigText(Config(path, true));
  const RunResult b = RunConfigText(Config(path, true));
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].end_s, b.jobs[i].end_s);
    EXPECT_EQ(a.jobs[i].wasted_gpu_s, b.jobs[i].wasted_gpu_s);
    EXPECT_EQ(a.jobs[i].failure, b.jobs[i].failure);
  }
}

TEST(TraceFailureRun, AWorkloadThatRecordsNoFailuresIsRefused) {
  const std::string dir = FreshDir("no-failures");
  const std::string generator =
      WriteFile(dir, "generator.textproto",
                "cluster { servers { name: \"s\" count: 1 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
                "workload { generator { num_jobs: 5 } replay_job_failures: true }\n");
  ProcessResult p = RunTroupe({"validate", generator});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("workload.replay_job_failures: the generator records no job failures"),
            std::string::npos)
      << p.err;
  const std::string trace =
      WriteFile(dir, "t.csv", "job_id,model,arrival_s,iterations,gpus\n0,res50,0,100,1\n");
  const std::string troupe_trace =
      WriteFile(dir, "trace.textproto",
                "cluster { servers { name: \"s\" count: 1 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
                "workload { trace_file: \"t.csv\" replay_job_failures: true }\nrun { out_dir: \"" +
                    dir + "/out\" }\n");
  p = RunTroupe({"run", troupe_trace});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("a troupe trace records no job failures"), std::string::npos) << p.err;
  EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
}

}  // namespace
}  // namespace troupe::testing
