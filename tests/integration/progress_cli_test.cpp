// Progress everywhere: run, sweep and chaos say how far they are on stderr (plain lines when
// stderr is not a terminal, as here), --quiet leaves that out (and only that: the tables still
// come), and the line never changes what a run computes. Chaos tags each run's log lines with its
// number and keeps run directories with --keep.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int Count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

const char kCluster[] =
    "cluster { servers { name: \"s\" count: 4 gpus: 4 cpus: 16 memory_gb: 200 } }\n"
    "workload { generator { jobs_per_hour: 8 num_jobs: 60 multi_gpu: true } }\n"
    "scheduler { mechanism: tune }\n"
    "run { seed: 5 }\n";

std::string WriteConfig(const std::string& dir) {
  WriteFile(dir + "/config.textproto", kCluster);
  return dir + "/config.textproto";
}

TEST(ProgressCli, ARunEndsWithAProgressLineUnlessQuiet) {
  const std::string dir = FreshDir("progress-run");
  const std::string config = WriteConfig(dir);
  ProcessResult shown = RunTroupe({"run", config, "--out", dir + "/shown"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_TRUE(Has(shown.err, "[troupe] run: 60/60 jobs (100%)")) << shown.err;
  EXPECT_TRUE(Has(shown.err, "| done\n")) << shown.err;
  EXPECT_FALSE(Has(shown.err, "\r")) << "a terminal line where stderr is a pipe";
  ProcessResult quiet = RunTroupe({"run", config, "--out", dir + "/quiet", "--quiet"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_FALSE(Has(quiet.err, "[troupe]")) << quiet.err;
  // --quiet drops the progress line only (README): the summary table still comes on stdout.
  EXPECT_TRUE(Has(shown.out, "JCT (h)")) << shown.out;
  EXPECT_TRUE(Has(quiet.out, "JCT (h)")) << quiet.out;
  // The line is only shown: the results are the same with it and without.
  EXPECT_EQ(ReadFile(dir + "/shown/jobs.csv"), ReadFile(dir + "/quiet/jobs.csv"));
  EXPECT_EQ(ReadFile(dir + "/shown/rounds.csv"), ReadFile(dir + "/quiet/rounds.csv"));
}

TEST(ProgressCli, ASweepCountsItsRunsAsTheyEnd) {
  const std::string dir = FreshDir("progress-sweep");
  const std::string config = WriteConfig(dir);
  ProcessResult r = RunTroupe(
      {"sweep", config, "--over", "scheduler.policy=fifo,srtf", "--seeds", "1-2", "--jobs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int done = 1; done <= 4; ++done) {
    EXPECT_TRUE(Has(r.err, "[troupe] sweep: " + std::to_string(done) + "/4 runs")) << r.err;
  }
  EXPECT_TRUE(Has(r.err, "| done\n")) << r.err;
  r = RunTroupe({"sweep", config, "--over", "scheduler.policy=fifo,srtf", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Has(r.err, "[troupe]")) << r.err;
  EXPECT_TRUE(Has(r.out, "srtf")) << "no sweep table under --quiet: " << r.out;
}

TEST(ProgressCli, ChaosTagsLogLinesWithTheirRunAndKeepsRunDirectories) {
  const std::string dir = FreshDir("progress-chaos");
  const std::string config = WriteConfig(dir);
  const std::string keep = dir + "/kept";
  ProcessResult r = RunTroupe({"chaos", config, "--runs", "2", "--seed", "3", "--faults", "4",
                               "--kinds", "crash", "--keep", keep, "--keep-all"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string log = r.out + r.err;
  EXPECT_GT(Count(log, "[run 1] "), 0) << log;
  EXPECT_GT(Count(log, "[run 2] "), 0) << log;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (Has(line, "fault at")) {
      EXPECT_TRUE(Has(line, "[run ")) << line;
    }
  }
  EXPECT_TRUE(Has(r.err, "[troupe] chaos: 3/3 runs (100%)")) << r.err;
  // Every run's directory, its config the run's own (drawn faults included): it replays.
  for (int run = 0; run <= 2; ++run) {
    EXPECT_TRUE(fs::exists(keep + "/run-" + std::to_string(run) + "/jobs.csv")) << run;
  }
  const std::string record = ReadFile(keep + "/run-2/config.textproto");
  EXPECT_TRUE(Has(record, "seed: 4")) << record;  // run 2's fault seed: 3 + 1
  ProcessResult again =
      RunTroupe({"run", keep + "/run-2/config.textproto", "--out", dir + "/again", "--quiet"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadFile(keep + "/run-2/jobs.csv"), ReadFile(dir + "/again/jobs.csv"));
  // Without --keep-all only failing runs are kept: here none. The folder stays troupe's, so a
  // second campaign may use it.
  r = RunTroupe({"chaos", config, "--runs", "1", "--seed", "3", "--keep", keep, "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(Has(r.err, "[troupe] chaos")) << r.err;
  EXPECT_TRUE(Has(r.out, "2 runs, 0 failed")) << "no chaos table under --quiet: " << r.out;
  EXPECT_FALSE(fs::exists(keep + "/run-1")) << "a run that held was kept";
}

TEST(ProgressCli, ChaosRefusesAKeepFolderItDidNotWrite) {
  const std::string dir = FreshDir("progress-keep-user");
  const std::string config = WriteConfig(dir);
  fs::create_directories(dir + "/mine");
  WriteFile(dir + "/mine/notes.txt", "mine");
  ProcessResult r = RunTroupe({"chaos", config, "--runs", "1", "--keep", dir + "/mine"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Count(r.err, "\n"), 1) << r.err;
  EXPECT_TRUE(Has(r.err, "--keep")) << r.err;
  EXPECT_EQ(ReadFile(dir + "/mine/notes.txt"), "mine");
}

}  // namespace
}  // namespace troupe::testing
