// A config names the files it reads relative to its own folder: the trace configs, copied with
// their traces the way `make install` lays them out (PREFIX/share/troupe/configs and .../data),
// validate and run from another current folder; a `--set` path is taken from the current folder;
// and the run's config.textproto replays from anywhere.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

// The configs that name a trace file (configs/traces/, data/philly.csv, a failure trace).
const char* const kTraceConfigs[] = {"philly-512", "philly-512-fabric", "helios-sample",
                                     "pai-sample", "acme-sample",       "failure-trace"};

// Runs the troupe binary with `args` in the current folder `cwd`.
ProcessResult RunTroupeIn(const std::string& cwd, const std::vector<std::string>& args) {
  const std::string logs = FreshDir("cwd-run");
  std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", cwd, TROUPE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult r;
  r.exit_code = WaitForExit(SpawnWithLogs(argv, logs + "/out", logs + "/err"));
  r.out = ReadFile(logs + "/out");
  r.err = ReadFile(logs + "/err");
  return r;
}

// `root`/share/troupe as `make install` leaves it: configs/ (with traces/) and data/.
std::string InstalledLayout(const std::string& root) {
  const fs::path share = fs::path(root) / "share/troupe";
  fs::create_directories(share / "configs");
  fs::create_directories(share / "data");
  for (const char* config : kTraceConfigs) {
    fs::copy_file(SourcePath("configs/" + std::string(config) + ".textproto"),
                  share / "configs" / (std::string(config) + ".textproto"));
  }
  fs::copy(SourcePath("configs/traces"), share / "configs/traces");
  fs::copy_file(SourcePath("configs/failure-trace-example.csv"),
                share / "configs/failure-trace-example.csv");
  fs::copy_file(DataPath("philly.csv"), share / "data/philly.csv");
  return share.string();
}

TEST(ConfigPaths, TraceConfigsValidateFromAnotherFolder) {
  const std::string root = FreshDir("installed");
  InstalledLayout(root);
  fs::create_directories(root + "/elsewhere");
  for (const char* config : kTraceConfigs) {
    SCOPED_TRACE(config);
    ProcessResult r =
        RunTroupeIn(root + "/elsewhere",
                    {"validate", "../share/troupe/configs/" + std::string(config) + ".textproto"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
}

TEST(ConfigPaths, ASetPathIsTakenFromTheCurrentFolder) {
  const std::string root = FreshDir("set-path");
  const std::string share = InstalledLayout(root);
  const std::string here = root + "/elsewhere";
  fs::create_directories(here);
  fs::copy_file(SourcePath("configs/traces/helios_cluster_log.csv"), here + "/mine.csv");
  const std::string config = share + "/configs/helios-sample.textproto";
  ProcessResult r =
      RunTroupeIn(here, {"validate", config, "--set", "workload.trace_file=mine.csv"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The config's own folder holds traces/helios_cluster_log.csv, the current folder does not.
  r = RunTroupeIn(
      here, {"validate", config, "--set", "workload.trace_file=traces/helios_cluster_log.csv"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("traces/helios_cluster_log.csv"), std::string::npos) << r.err;
}

// Both kinds of relative input path (from the file, from a --set) are absolute in the record, so
// it replays from a third folder with the same jobs.
TEST(ConfigPaths, TheRunRecordReplaysFromAnotherFolder) {
  const std::string root = FreshDir("record-paths");
  const std::string share = InstalledLayout(root);
  const std::string here = root + "/elsewhere";
  fs::create_directories(here);
  fs::copy_file(SourcePath("configs/traces/pai_task_table.csv"), here + "/mine.csv");
  const std::string config = share + "/configs/helios-sample.textproto";
  ProcessResult r = RunTroupeIn(here, {"run", config, "--out", "from-file", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunTroupeIn(here, {"run", config, "--set", "workload.trace_file=mine.csv", "--set",
                         "workload.trace_format=auto_detect", "--out", "from-set", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string expected[][2] = {
      {"from-file", share + "/configs/traces/helios_cluster_log.csv"},
      {"from-set", here + "/mine.csv"}};
  for (const auto& [run, trace] : expected) {
    SCOPED_TRACE(run);
    const std::string dir = here + "/" + run;
    const std::string record = ReadFile(dir + "/config.textproto");
    EXPECT_NE(record.find("trace_file: \"" + trace + "\""), std::string::npos) << record;
    const std::string again = FreshDir("record-paths-again") + "/run";
    ProcessResult replay = RunTroupe({"run", dir + "/config.textproto", "--out", again, "--quiet"});
    ASSERT_EQ(replay.exit_code, 0) << replay.err;
    EXPECT_EQ(ReadFile(dir + "/jobs.csv"), ReadFile(again + "/jobs.csv"));
  }
}

}  // namespace
}  // namespace troupe::testing
