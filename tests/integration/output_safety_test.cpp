// Nothing a user owns is ever overwritten or deleted: `troupe run`, `sweep` and `report` replace a
// folder only when troupe wrote it (runner/output_folder.hpp), refuse anything else with exit
// status 2 before running, and clean up the staging folders of killed runs.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "runner/output_folder.hpp"
#include "tests/integration/ps_fixture.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

class OutputSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("output-safety");
    WriteFile(dir_ + "/trace.csv",
              "job_id,model,arrival_s,iterations,gpus\n0,res18,0,100,1\n1,res18,60,100,1\n");
    config_ = dir_ + "/config.textproto";
    WriteFile(config_,
              "cluster { servers { count: 1 gpus: 4 cpus: 12 memory_gb: 200 } }\n"
              "workload { trace_file: \"" +
                  dir_ + "/trace.csv\" }\n");
  }

  ProcessResult Run(const std::string& out) {
    return RunTroupe({"run", config_, "--quiet", "--out", out});
  }

  static void ExpectRefused(const ProcessResult& r, const std::string& what) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  }

  // The names in `folder`, to show that nothing was added or taken away.
  static std::vector<std::string> Entries(const std::string& folder) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
  std::string config_;
};

TEST_F(OutputSafety, AFolderWithAUsersFilesIsNeverReplaced) {
  const std::string out = dir_ + "/mine";
  fs::create_directories(out);
  WriteFile(out + "/thesis.tex", "years of work");
  const auto before = Entries(dir_);
  ExpectRefused(Run(out), "was not written by troupe");
  EXPECT_EQ(ReadFile(out + "/thesis.tex"), "years of work");
  EXPECT_EQ(Entries(dir_), before);  // no staging folder left beside it either
}

TEST_F(OutputSafety, DotDotAfterALongerPathIsRefused) {
  fs::create_directories(dir_ + "/runs/one");
  WriteFile(dir_ + "/runs/keep.txt", "a sibling");
  ExpectRefused(Run(dir_ + "/runs/one/.."), "was not written by troupe");
  EXPECT_EQ(ReadFile(dir_ + "/runs/keep.txt"), "a sibling");
  EXPECT_TRUE(fs::is_directory(dir_ + "/runs/one"));
  ExpectRefused(Run("."), "must name a folder");
  ExpectRefused(Run(".."), "must name a folder");
}

TEST_F(OutputSafety, ItsOwnRunIsReplacedUntilAUserAddsAFile) {
  const std::string out = dir_ + "/run";
  const ProcessResult first = Run(out);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("run directory: " + out + "\n"), std::string::npos) << first.out;
  EXPECT_TRUE(IsTroupeFolder(out));
  ASSERT_EQ(Run(out).exit_code, 0) << "a run directory troupe wrote is replaced";
  WriteFile(out + "/my-notes.txt", "added by hand");
  ExpectRefused(Run(out), "files troupe did not write");
  EXPECT_EQ(ReadFile(out + "/my-notes.txt"), "added by hand");
  EXPECT_TRUE(fs::exists(out + "/jobs.csv"));
}

TEST_F(OutputSafety, UnusableOutPathsAreRefusedBeforeTheRun) {
  WriteFile(dir_ + "/file.txt", "a file");
  ExpectRefused(Run(dir_ + "/file.txt"), "is not a folder");
  ExpectRefused(Run(dir_ + "/file.txt/below"), "is not a folder");
  EXPECT_EQ(ReadFile(dir_ + "/file.txt"), "a file");
  // The current folder (or one holding it) is never a run directory.
  ExpectRefused(Run(fs::current_path().string()), "current folder");
}

TEST_F(OutputSafety, AKilledRunsStagingFolderIsRemovedByTheNextRun) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // a process id no process has any more
  const std::string stale = dir_ + "/run.tmp-" + std::to_string(child);
  fs::create_directories(stale + "/ssd");
  WriteFile(stale + "/" + kOutputMarker, OutputMarkerText("staging", {}));
  const std::string unmarked = dir_ + "/run.tmp-" + std::to_string(child + 1000000);
  fs::create_directories(unmarked);  // not marked: somebody else's, kept
  ASSERT_EQ(Run(dir_ + "/run").exit_code, 0);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(unmarked));
}

TEST_F(OutputSafety, SweepFolderNamesNeverLeaveTheSweep) {
  // A value with separators and "..": it must not become a path.
  const std::string value = dir_ + "/sub/../trace.csv";
  fs::create_directories(dir_ + "/sub");
  const std::string out = dir_ + "/sweep";
  const auto before = Entries(dir_);
  ProcessResult r = RunTroupe(
      {"sweep", config_, "--over", "workload.trace_file=" + value, "--out", out, "--jobs", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto after = Entries(dir_);
  after.erase(std::find(after.begin(), after.end(), "sweep"));
  EXPECT_EQ(after, before) << "the sweep wrote outside --out";
  const auto inside = Entries(out);
  ASSERT_EQ(inside.size(), 3u);  // the marker, sweep.csv and one run
  for (const std::string& name : inside) EXPECT_EQ(name.find('/'), std::string::npos);
  EXPECT_TRUE(IsTroupeFolder(out));
  // A sweep into a user's folder is refused before any run.
  fs::create_directories(dir_ + "/mine");
  WriteFile(dir_ + "/mine/data.csv", "x");
  r = RunTroupe({"sweep", config_, "--over", "scheduler.mechanism=tune", "--out", dir_ + "/mine"});
  ExpectRefused(r, "was not written by troupe");
  EXPECT_EQ(Entries(dir_ + "/mine"), std::vector<std::string>{"data.csv"});
}

TEST_F(OutputSafety, ReportRefusesAFolderItDidNotWrite) {
  ASSERT_EQ(Run(dir_ + "/run").exit_code, 0);
  fs::create_directories(dir_ + "/figures");
  WriteFile(dir_ + "/figures/keep.png", "mine");
  ProcessResult r = RunTroupe({"report", dir_ + "/run", "--out", dir_ + "/figures"});
  ExpectRefused(r, "was not written by troupe");
  EXPECT_EQ(Entries(dir_ + "/figures"), std::vector<std::string>{"keep.png"});
}

TEST_F(OutputSafety, AParameterServerNeverEmptiesAFolderItDidNotMake) {
  const std::string ssd = dir_ + "/ssd";
  fs::create_directories(ssd + "/node-0");
  WriteFile(ssd + "/node-0/embeddings.bin", "precious");
  const PsRun refused = RunPs(kSmallPsConfig, {"paramserver.ssd_dir=" + ssd});
  EXPECT_EQ(refused.status.code(), Status::Code::kInvalidInput) << refused.status.message();
  EXPECT_NE(refused.status.message().find("paramserver.ssd_dir"), std::string::npos);
  EXPECT_EQ(ReadFile(ssd + "/node-0/embeddings.bin"), "precious");
  // The stores troupe made are emptied and reused by the next run.
  const PsRun first = RunPs(kSmallPsConfig, {"paramserver.ssd_dir=" + dir_ + "/ssd2"});
  ASSERT_TRUE(first.status.ok()) << first.status.message();
  const PsRun second = RunPs(kSmallPsConfig, {"paramserver.ssd_dir=" + dir_ + "/ssd2"});
  ASSERT_TRUE(second.status.ok()) << second.status.message();
  EXPECT_EQ(first.result.summary.auc, second.result.summary.auc);
}

}  // namespace
}  // namespace troupe::testing
