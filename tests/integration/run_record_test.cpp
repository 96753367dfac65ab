// Runs that say what they were: every run directory, of every kind and in a sweep too, holds
// config.textproto (the config with every --set applied, troupe's version, the command), and
// `troupe run RUN_DIR/config.textproto` gives the same results. Repeated fields are set and swept
// by index; a measurement window that holds no job is refused before anything runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Runs `dir`/config.textproto again into `again` and expects the same `files`.
void ExpectReplays(const std::string& dir, const std::string& again,
                   const std::vector<std::string>& files) {
  ProcessResult r = RunTroupe({"run", dir + "/config.textproto", "--out", again, "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& file : files) {
    const std::string first = ReadFile(dir + "/" + file);
    EXPECT_FALSE(first.empty()) << file;
    EXPECT_EQ(first, ReadFile(again + "/" + file)) << file << " differs when replayed";
  }
}

TEST(RunRecord, AClusterRunRecordsItsSetsAndReplaysFromThem) {
  const std::string dir = FreshDir("record-cluster");
  const std::string out = dir + "/run";
  ProcessResult r = RunTroupe({"run", SourcePath("tests/data/edges/cluster.textproto"), "--set",
                               "scheduler.policy=srtf", "--set", "cluster.servers[0].count=3",
                               "--seed", "9", "--out", out, "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string record = ReadFile(out + "/config.textproto");
  EXPECT_TRUE(Has(record, "policy: srtf")) << record;
  EXPECT_TRUE(Has(record, "count: 3")) << record;
  EXPECT_TRUE(Has(record, "seed: 9")) << record;
  EXPECT_TRUE(Has(record, "out_dir: \"" + out + "\"")) << record;
  EXPECT_TRUE(Has(record, "# troupe ")) << record;
  EXPECT_TRUE(Has(record, "# command: troupe run ")) << record;
  EXPECT_TRUE(Has(record, "--set scheduler.policy=srtf")) << record;
  // The run has faults (fixed and drawn from the seed): they replay too.
  ExpectReplays(out, dir + "/again", {"jobs.csv", "rounds.csv"});
}

TEST(RunRecord, ParameterServerAndOasisRunsRecordAndReplayToo) {
  const std::string dir = FreshDir("record-kinds");
  ProcessResult r = RunTroupe({"run", SourcePath("tests/data/edges/ps.textproto"), "--set",
                               "paramserver.hidden[0]=6", "--out", dir + "/ps", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(ReadFile(dir + "/ps/config.textproto"), "hidden: 6"));
  ExpectReplays(dir + "/ps", dir + "/ps-again", {"batches.csv"});

  r = RunTroupe({"run", SourcePath("tests/data/edges/oasis.textproto"), "--set",
                 "oasis.policy=fifo", "--out", dir + "/oasis", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(ReadFile(dir + "/oasis/config.textproto"), "policy: \"fifo\""));
  ExpectReplays(dir + "/oasis", dir + "/oasis-again", {"jobs.csv", "slots.csv"});
}

// A sweep over a repeated field's entry: each point's directory records the point's value.
TEST(RunRecord, ASweepOverAServerGroupRecordsEachPoint) {
  const std::string out = FreshDir("record-sweep") + "/sweep";
  ProcessResult r = RunTroupe({"sweep", SourcePath("tests/data/edges/cluster.textproto"), "--over",
                               "cluster.servers[0].count=2,3", "--out", out, "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = ReadCsv(out + "/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    const std::string count = row.at("cluster.servers[0].count");
    std::string point;
    for (const auto& entry : fs::directory_iterator(out)) {
      if (entry.is_directory() && Has(entry.path().filename().string(), "count-" + count)) {
        point = entry.path().string();
      }
    }
    ASSERT_FALSE(point.empty()) << "no folder for count " << count;
    const std::string record = ReadFile(point + "/config.textproto");
    EXPECT_TRUE(Has(record, "count: " + count)) << record;
    EXPECT_TRUE(Has(record, "# command: troupe sweep ")) << record;
  }
}

// A line break in a --set string, and in the name of the folder the run started in (both in the
// record's header), still leaves a record that replays.
TEST(RunRecord, LineBreaksInSetsAndFoldersStillReplay) {
  const std::string dir = FreshDir("record-line-breaks");
  const std::string started_in = dir + "/a\nfolder";
  fs::create_directories(started_in);
  const fs::path here = fs::current_path();
  fs::current_path(started_in);
  ProcessResult r = RunTroupe({"run", SourcePath("tests/data/edges/cluster.textproto"), "--set",
                               "cluster.servers[0].name=a\nb'c", "--out", dir + "/run", "--quiet"});
  fs::current_path(here);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string record = ReadFile(dir + "/run/config.textproto");
  EXPECT_TRUE(Has(record, "name: \"a\\nb\\'c\"")) << record;
  EXPECT_TRUE(Has(record, "--set $'cluster.servers[0].name=a\\nb\\'c'")) << record;
  EXPECT_TRUE(Has(record, "# started in: " + dir + "/a\\nfolder ")) << record;
  ExpectReplays(dir + "/run", dir + "/again", {"jobs.csv", "rounds.csv"});
}

TEST(RunRecord, ValidateTakesSetsAndIndexesAreChecked) {
  const std::string config = SourcePath("tests/data/edges/cluster.textproto");
  ProcessResult r = RunTroupe({"validate", config, "--set", "cluster.servers[0].count=5"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "5 servers")) << r.out;
  r = RunTroupe({"validate", config, "--set", "scheduler.policy=sjf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  const std::string out = FreshDir("record-bad-index") + "/run";
  r = RunTroupe({"run", config, "--set", "cluster.servers[1].count=5", "--out", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(Has(r.err, "--set cluster.servers[1].count=5: index 1 out of range")) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// A window of job ids the workload does not have would end in a table of zeros.
TEST(RunRecord, AMeasurementWindowWithoutJobsIsRefused) {
  const std::string dir = FreshDir("record-window");
  WriteFile(dir + "/trace.csv",
            "job_id,model,arrival_s,iterations,gpus\n0,res50,0,100,1\n1,res50,5,100,1\n"
            "2,res50,9,100,1\n");
  WriteFile(dir + "/config.textproto",
            "cluster { servers { count: 1 gpus: 4 cpus: 16 memory_gb: 200 } }\n"
            "workload { trace_file: \"" +
                dir +
                "/trace.csv\" }\n"
                "run { measure_first_job: 4000 measure_last_job: 4999 }\n");
  ProcessResult r = RunTroupe({"run", dir + "/config.textproto", "--out", dir + "/out"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(Has(r.err, "run.measure_first_job..run.measure_last_job (4000..4999)")) << r.err;
  EXPECT_TRUE(Has(r.err, "3 jobs, ids 0..2")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  // The generator's jobs are numbered from 0 too.
  r = RunTroupe({"validate", SourcePath("tests/data/edges/cluster.textproto"), "--set",
                 "run.measure_first_job=30", "--set", "run.measure_last_job=40"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "24 jobs, ids 0..23")) << r.err;
  // A window that holds some of the jobs runs.
  r = RunTroupe({"run", dir + "/config.textproto", "--set", "run.measure_first_job=1", "--set",
                 "run.measure_last_job=4999", "--out", dir + "/out", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace troupe::testing
