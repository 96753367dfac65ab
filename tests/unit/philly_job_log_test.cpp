// Philly's job log (JSON, workload/philly_job_log.hpp) and the trace failures a run can replay
// (workload.replay_job_failures): the sample in configs/traces/ loads into the jobs its entries
// describe, with their attempts and failures only when asked; the format is told from the first
// character; bad JSON and bad or missing fields are refused naming the file and where; the CSV
// traces that record a state mark their failed jobs, and those that record none are refused.
#include "workload/philly_job_log.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "workload/model_catalog.hpp"
#include "workload/public_traces.hpp"
#include "workload/trace_fields.hpp"
#include "workload/trace_reader.hpp"

namespace troupe {
namespace {

std::string Sample(const std::string& name) {
  return std::string(TROUPE_SOURCE_DIR) + "/configs/traces/" + name;
}

std::vector<JobSpec> ReadSample(const std::string& name, bool replay,
                                TraceFormat format = TraceFormat::kAutoDetect) {
  TraceOptions options;
  options.format = format;
  options.replay_job_failures = replay;
  std::vector<JobSpec> jobs;
  Status status = ReadTrace(Sample(name), options, ModelCatalog::BuiltIn(), &jobs);
  EXPECT_TRUE(status.ok()) << status.message();
  return jobs;
}

// The refusal of `text` as a trace (empty when it is accepted).
std::string Refusal(const std::string& text, bool replay = false,
                    TraceFormat format = TraceFormat::kAutoDetect) {
  TraceOptions options;
  options.format = format;
  options.replay_job_failures = replay;
  std::vector<JobSpec> jobs;
  Status status = ParseTrace(text, "log.json", options, ModelCatalog::BuiltIn(), &jobs);
  if (status.ok()) return "";
  EXPECT_EQ(status.exit_code(), 2);
  EXPECT_TRUE(jobs.empty());
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << "one line";
  return status.message();
}

// One job of the log: submitted at 2017-10-07 00:00:00 + `submitted_s`, with `attempts`
// (JSON text) and `status`.
std::string Job(const std::string& id, const std::string& attempts,
                const std::string& status = "Pass") {
  return R"({"jobid": ")" + id + R"(", "status": ")" + status +
         R"(", "submitted_time": "2017-10-07 00:00:00", "attempts": [)" + attempts + "]}";
}

std::string Attempt(const std::string& start, const std::string& end, int gpus = 1) {
  std::string list;
  for (int g = 0; g < gpus; ++g)
    list += std::string(g ? "," : "") + "\"gpu" + std::to_string(g) + "\"";
  return R"({"start_time": )" + start + R"(, "end_time": )" + end +
         R"(, "detail": [{"ip": "m1", "gpus": [)" + list + "]}]}";
}

TEST(PhillyJobLog, SampleGivesArrivalGpusAndTheLastAttemptsRunTime) {
  const std::vector<JobSpec> jobs = ReadSample("philly_cluster_job_log.json", false);
  ASSERT_EQ(jobs.size(), 4u);  // no attempt, or a last attempt still running: skipped
  const std::vector<double> arrival = {0, 471, 1401, 3441};
  const std::vector<int> gpus = {8, 4, 2, 1};
  const std::vector<double> run_s = {7200, 1800, 7200, 900};
  const std::vector<int64_t> entry = {1, 2, 3, 6};
  for (size_t i = 0; i < jobs.size(); ++i) {
    SCOPED_TRACE("job " + std::to_string(i));
    EXPECT_EQ(jobs[i].job_id, static_cast<int64_t>(i));
    EXPECT_EQ(jobs[i].arrival_s, arrival[i]);
    EXPECT_EQ(jobs[i].gpus, gpus[i]);  // the first attempt's, over every server
    EXPECT_EQ(jobs[i].source_line, entry[i]);
    const ModelProfile* model = ModelCatalog::BuiltIn().Find(jobs[i].model);
    ASSERT_NE(model, nullptr);
    EXPECT_EQ(jobs[i].iterations, IterationsFor(run_s[i], *model));
    // Without replay_job_failures nothing of the failures is kept.
    EXPECT_EQ(jobs[i].trace_end, TraceEnd::kNone);
    EXPECT_TRUE(jobs[i].crashed_attempts_s.empty());
  }
}

TEST(PhillyJobLog, ReplayKeepsEarlierAttemptsAndFailedStatus) {
  const std::vector<JobSpec> jobs = ReadSample("philly_cluster_job_log.json", true);
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].trace_end, TraceEnd::kNone);  // Pass
  EXPECT_TRUE(jobs[0].crashed_attempts_s.empty());
  EXPECT_EQ(jobs[1].trace_end, TraceEnd::kFailed);  // Failed, after two crashed attempts
  EXPECT_EQ(jobs[1].crashed_attempts_s, (std::vector<double>{600, 1200}));
  EXPECT_EQ(jobs[2].trace_end, TraceEnd::kNone);  // Killed: ended by its user, not a failure
  EXPECT_EQ(jobs[2].crashed_attempts_s, (std::vector<double>{3600}));
  EXPECT_EQ(jobs[3].trace_end, TraceEnd::kFailed);
  EXPECT_TRUE(jobs[3].crashed_attempts_s.empty());
  EXPECT_STREQ(TraceEndName(jobs[3].trace_end), "Failed");
}

TEST(PhillyJobLog, JsonIsToldFromItsFirstCharacter) {
  TraceOptions options;
  options.replay_job_failures = true;
  std::vector<JobSpec> jobs;
  const std::string one =
      Job("j1", Attempt(R"("2017-10-07 00:01:00")", R"("2017-10-07 00:11:00")", 2), "Failed");
  // A top-level object is one job; whitespace before it is skipped.
  ASSERT_TRUE(ParseTrace("\n  " + one, "log.json", options, ModelCatalog::BuiltIn(), &jobs).ok());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].gpus, 2);
  EXPECT_EQ(jobs[0].trace_end, TraceEnd::kFailed);
  ASSERT_TRUE(
      ParseTrace("[" + one + "]", "log.json", options, ModelCatalog::BuiltIn(), &jobs).ok());
  EXPECT_EQ(jobs.size(), 1u);
}

TEST(PhillyJobLog, AttemptsWithoutTimesAreSkippedOrLeftOut) {
  TraceOptions options;
  options.replay_job_failures = true;
  const std::string unended = Attempt(R"("2017-10-07 00:01:00")", "null");
  const std::string minute = Attempt(R"("2017-10-07 00:02:00")", R"("2017-10-07 00:03:00")");
  const std::string last = Attempt(R"("2017-10-07 00:04:00")", R"("2017-10-07 00:05:00")");
  const std::string unstarted = Attempt(R"("None")", R"("2017-10-07 00:03:00")");
  const std::string no_gpus = Attempt(R"("2017-10-07 00:01:00")", R"("2017-10-07 00:03:00")", 0);
  // An earlier attempt without an end is left out of the crashes; the job still runs. A first
  // attempt that never started, or one without GPUs, is no GPU work: skipped.
  std::string log = "[";
  log.append(Job("j1", unended + "," + minute + "," + last)).append(",");
  log.append(Job("j2", unstarted)).append(",");
  log.append(Job("j3", no_gpus)).append("]");
  std::vector<JobSpec> jobs;
  ASSERT_TRUE(ParseTrace(log, "log.json", options, ModelCatalog::BuiltIn(), &jobs).ok());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].crashed_attempts_s, (std::vector<double>{60}));
}

TEST(PhillyJobLog, BadInputIsOneLineNamingTheFileAndWhere) {
  const std::string ok = Attempt(R"("2017-10-07 00:01:00")", R"("2017-10-07 00:02:00")");
  auto starts = [](const std::string& message, const std::string& prefix) {
    return message.rfind(prefix, 0) == 0 ? ::testing::AssertionSuccess()
                                         : ::testing::AssertionFailure() << message;
  };
  // Syntax: the parser's line and column.
  EXPECT_TRUE(starts(Refusal("[\n" + Job("j1", ok) + ",\n  {\"jobid\": }]"),
                     "log.json: parse error at line 3, column 13: syntax error"));
  EXPECT_TRUE(starts(Refusal("[" + Job("j1", ok)), "log.json: parse error at line 1, column"));
  // Fields: the job's place in the list, its jobid and the field.
  EXPECT_EQ(
      Refusal("[" + Job("j1", ok) + R"(, {"jobid": "j2", "status": "Pass", "attempts": []}])"),
      "log.json: job 2 (jobid 'j2'): 'submitted_time' is missing");
  EXPECT_EQ(Refusal("[" + Job("j1", ok, "Done") + "]"),
            "log.json: job 1 (jobid 'j1'): 'status' must be Pass, Killed or Failed, got 'Done'");
  EXPECT_EQ(
      Refusal(R"([{"jobid": "j1", "status": "Pass", "submitted_time": "2017-10-07 00:00:00"}])"),
      "log.json: job 1 (jobid 'j1'): 'attempts' is missing or not a list");
  EXPECT_EQ(Refusal("[" + Job("j1", Attempt(R"("yesterday")", R"("2017-10-07 00:02:00")")) + "]"),
            "log.json: job 1 (jobid 'j1'): attempt 1: 'start_time' is not a 'YYYY-MM-DD "
            "HH:MM:SS' time: 'yesterday'");
  EXPECT_TRUE(starts(
      Refusal(
          "[" +
          Job("j1", ok + "," + Attempt(R"("2017-10-07 00:09:00")", R"("2017-10-07 00:08:00")")) +
          "]"),
      "log.json: job 1 (jobid 'j1'): attempt 2: 'end_time' must be in [start_time,"));
  EXPECT_EQ(
      Refusal(
          R"([{"jobid": "j1", "status": "Pass", "submitted_time": "2017-10-07 00:00:00",)"
          R"( "attempts": [{"start_time": "2017-10-07 00:00:00", "end_time": "2017-10-07 00:01:00"}]}])"),
      "log.json: job 1 (jobid 'j1'): attempt 1: 'detail' is missing or not a list");
  EXPECT_EQ(Refusal("[" + Job("j1", ok) + ", 7]"), "log.json: job 2: not an object");
  EXPECT_EQ(Refusal("\"jobs\"", false, TraceFormat::kPhillyJobLog), "log.json: not a list of jobs");
  // Given the format, a CSV file is refused by the JSON parser, at its first character.
  EXPECT_TRUE(starts(Refusal("job_id,model\n", false, TraceFormat::kPhillyJobLog),
                     "log.json: parse error at line 1, column 1"));
}

TEST(TraceFailures, CsvStatesMarkTheFailedJobsOnlyWhenAsked) {
  // Acme's Seren sample: its first row FAILED, the fourth CANCELLED (ended by its user: no
  // failure).
  std::vector<JobSpec> jobs = ReadSample("acme_trace_seren.csv", true);
  ASSERT_GE(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].trace_end, TraceEnd::kSlurmFailed);
  EXPECT_EQ(jobs[1].trace_end, TraceEnd::kNone);
  for (const JobSpec& job : ReadSample("acme_trace_seren.csv", false)) {
    EXPECT_EQ(job.trace_end, TraceEnd::kNone);
  }
  jobs = ReadSample("helios_cluster_log.csv", true);
  ASSERT_GE(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].trace_end, TraceEnd::kNone);         // COMPLETED
  EXPECT_EQ(jobs[1].trace_end, TraceEnd::kSlurmFailed);  // FAILED
  EXPECT_EQ(TraceEndOf("NODE_FAIL"), TraceEnd::kSlurmNodeFail);
  EXPECT_EQ(TraceEndOf("OUT_OF_MEMORY"), TraceEnd::kSlurmOutOfMemory);
  EXPECT_EQ(TraceEndOf("TIMEOUT"), TraceEnd::kNone);
}

TEST(TraceFailures, TracesThatRecordNoFailuresAreRefused) {
  EXPECT_EQ(Refusal("job_id,model,arrival_s,iterations,gpus\n0,res50,0,10,1\n", true),
            "log.json: workload.replay_job_failures: a troupe trace records no job failures; "
            "replay a trace that does (helios, acme, alibaba_pai, philly_job_log)");
  EXPECT_TRUE(Refusal("timestamp,duration,num_gpus,gpu_time,cluster\n", true)
                  .find("Philly's summary trace records no job failures") != std::string::npos);
  // A state column is needed to replay a CSV trace's failures.
  EXPECT_EQ(Refusal("submit_time,duration,gpu_num,vc\n", true),
            "log.json:1: header has no column 'state' (found: submit_time,duration,gpu_num,vc)");
  EXPECT_EQ(Refusal("timestamp,duration,num_gpus,gpu_time,cluster\n", false), "");
}

}  // namespace
}  // namespace troupe
