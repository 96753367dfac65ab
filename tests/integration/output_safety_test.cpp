// Nothing a user owns is ever overwritten or deleted: `troupe run`, `sweep` and `report` replace a
// folder only when troupe wrote it (runner/output_folder.hpp), refuse anything else with exit
// status 2 before running, and clean up the staging folders of killed runs.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

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

  // A process id no process has any more.
  static pid_t DeadPid() {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    return child;
  }

  // Runs troupe with no file it writes allowed past `max_bytes`: a disk that fills up.
  static ProcessResult RunOnAFullDisk(const std::vector<std::string>& args, rlim_t max_bytes) {
    std::vector<std::string> words = {TROUPE_BINARY};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    int out[2], err[2];
    if (::pipe(out) != 0 || ::pipe(err) != 0) return {};
    const pid_t child = ::fork();
    if (child == 0) {
      ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG, like ENOSPC
      const rlimit limit = {max_bytes, max_bytes};
      ::setrlimit(RLIMIT_FSIZE, &limit);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    auto drain = [](int fd) {
      std::string text;
      char buf[4096];
      for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, n);
      ::close(fd);
      return text;
    };
    ProcessResult result;
    result.err = drain(err[0]);  // one line, or little more: never fills the pipe
    result.out = drain(out[0]);
    result.exit_code = WaitForExit(child);
    return result;
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
  const pid_t dead = DeadPid();
  const std::string stale = dir_ + "/run.tmp-" + std::to_string(dead);
  fs::create_directories(stale);
  WriteFile(stale + "/" + kOutputMarker, OutputMarkerText("staging", {"config.textproto"}));
  WriteFile(stale + "/config.textproto", "cut sho");
  // Killed (or out of disk) while writing its marker: nothing but the marker, cut short.
  const std::string empty_marker = dir_ + "/run.tmp-" + std::to_string(dead + 1000000);
  fs::create_directories(empty_marker);
  WriteFile(empty_marker + "/" + kOutputMarker, "");
  const std::string cut_marker = dir_ + "/run.tmp-" + std::to_string(dead + 2000000);
  fs::create_directories(cut_marker);
  WriteFile(cut_marker + "/" + kOutputMarker, "troupe outp");
  const std::string unmarked = dir_ + "/run.tmp-" + std::to_string(dead + 3000000);
  fs::create_directories(unmarked);  // not marked: somebody else's, kept
  ASSERT_EQ(Run(dir_ + "/run").exit_code, 0);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(empty_marker));
  EXPECT_FALSE(fs::exists(cut_marker));
  EXPECT_TRUE(fs::exists(unmarked));
}

// A parameter-server run killed mid-way leaves its SSD-PS stores in its staging folder: the store's
// own files make no folder a user's, so the next run removes it; a file added beside them does.
TEST_F(OutputSafety, AKilledParameterServerRunsStagingFolderIsRemovedByTheNextRun) {
  const pid_t dead = DeadPid();
  auto killed_ps_staging = [&](const std::string& staging, const std::string& extra_file) {
    fs::create_directories(staging + "/ssd/node-0");
    WriteFile(staging + "/" + kOutputMarker, OutputMarkerText("staging", {}));
    WriteFile(staging + "/ssd/" + kOutputMarker, OutputMarkerText(kSsdRootKind, {}));
    WriteFile(staging + "/ssd/node-0/" + kOutputMarker, OutputMarkerText(kSsdPsKind, {}));
    WriteFile(staging + "/ssd/node-0/MANIFEST", "manifest");
    WriteFile(staging + "/ssd/node-0/00000000000000000007.ssd", "rows");
    if (!extra_file.empty()) WriteFile(staging + "/ssd/node-0/" + extra_file, "mine");
  };
  const std::string stores_only = dir_ + "/run.tmp-" + std::to_string(dead);
  killed_ps_staging(stores_only, "");
  const std::string with_notes = dir_ + "/run.tmp-" + std::to_string(dead + 1000000);
  killed_ps_staging(with_notes, "NOTES.txt");
  const ProcessResult r = Run(dir_ + "/run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(stores_only));
  EXPECT_EQ(ReadFile(with_notes + "/ssd/node-0/NOTES.txt"), "mine");
}

// A marker says nothing of the files beside it: a leftover holding a user's file is neither
// removed nor moved onto the run directory, whatever its marker says.
TEST_F(OutputSafety, LeftoversHoldingAUsersFileAreNeverTouched) {
  const pid_t dead = DeadPid();
  const std::string staging = dir_ + "/run.tmp-" + std::to_string(dead);
  fs::create_directories(staging);
  WriteFile(staging + "/" + kOutputMarker, OutputMarkerText("staging", {}));
  WriteFile(staging + "/NOTES.txt", "mine");
  // A folder of the user's with a marker forged to name its files, and one without a marker.
  const std::string forged = dir_ + "/run.old-" + std::to_string(dead + 1000000);
  fs::create_directories(forged);
  WriteFile(forged + "/" + kOutputMarker, OutputMarkerText("run", {"NOTES.txt"}));
  WriteFile(forged + "/NOTES.txt", "mine too");
  const std::string plain = dir_ + "/run.old-" + std::to_string(dead + 2000000);
  fs::create_directories(plain);
  WriteFile(plain + "/NOTES.txt", "and mine");
  for (int i = 0; i < 2; ++i) {  // the second run replaces the first
    const ProcessResult r = Run(dir_ + "/run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(ReadFile(staging + "/NOTES.txt"), "mine");
  EXPECT_EQ(ReadFile(forged + "/NOTES.txt"), "mine too");
  EXPECT_EQ(ReadFile(plain + "/NOTES.txt"), "and mine");
  EXPECT_FALSE(fs::exists(dir_ + "/run/NOTES.txt"));
  EXPECT_TRUE(fs::exists(dir_ + "/run/jobs.csv"));
  // A run directory troupe set aside and could not put back is put back by the next run.
  fs::rename(dir_ + "/run", dir_ + "/run.old-" + std::to_string(dead + 3000000));
  const ProcessResult again = Run(dir_ + "/run");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_FALSE(fs::exists(dir_ + "/run.old-" + std::to_string(dead + 3000000)));
}

// A full disk (every file limited to a few bytes): one line, exit status 1, and nothing left
// behind, not even the staging folder's marker.
TEST_F(OutputSafety, AFullDiskLeavesNoStagingFolder) {
  const auto before = Entries(dir_);
  for (rlim_t bytes : {0, 40}) {  // the marker cannot be written; the marker but no file
    const ProcessResult r =
        RunOnAFullDisk({"run", config_, "--quiet", "--out", dir_ + "/run"}, bytes);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
    EXPECT_EQ(Entries(dir_), before) << r.err;
  }
}

// The disk fills after the runs, while sweep.csv is written: the sweep fails, and no sweep.csv
// cut short is left to be taken for its results.
TEST_F(OutputSafety, ASweepWhoseTableCannotBeWrittenFails) {
  const std::string out = dir_ + "/sweep";
  const std::vector<std::string> args = {"sweep",   config_,  "--over", "scheduler.mechanism=tune",
                                         "--seeds", "1-60",   "--out",  out,
                                         "--quiet", "--jobs", "4"};
  // Room for every file of a run (and the folder's marker), not for the table of 60 runs.
  const ProcessResult r = RunOnAFullDisk(args, 2048);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("sweep.csv"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out + "/sweep.csv"));
  EXPECT_FALSE(fs::exists(out + "/sweep.csv.tmp"));
  EXPECT_TRUE(IsTroupeFolder(out));
  // With room, the same sweep writes it.
  const ProcessResult ok = RunTroupe(args);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ReadCsv(out + "/sweep.csv").size(), 60u);
}

// A sweep killed mid-way leaves a folder the next sweep into it takes for troupe's, unless a
// user added a file to it.
TEST_F(OutputSafety, ASweepKilledMidwayIsRerunIntoTheSameFolder) {
  // Long enough runs that the sweep is found mid-run.
  WriteFile(config_,
            "cluster { servers { count: 1 gpus: 4 cpus: 12 memory_gb: 200 } }\n"
            "workload { generator { jobs_per_hour: 60 num_jobs: 10000 } }\n");
  const std::string out = dir_ + "/sweep";
  const std::vector<std::string> args = {"sweep",   config_,  "--over", "scheduler.mechanism=tune",
                                         "--seeds", "1-3",    "--out",  out,
                                         "--quiet", "--jobs", "1"};
  std::vector<std::string> argv = {TROUPE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  const int pid = SpawnWithLogs(argv, dir_ + "/stdout", dir_ + "/stderr");
  ASSERT_GT(pid, 0);
  // Killed once a run has staged a file (its config.textproto): staging folders hold files then.
  std::string staging;
  while (staging.empty() && ::waitpid(pid, nullptr, WNOHANG) == 0) {
    std::error_code ec;
    for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().string().find(".tmp-") != std::string::npos &&
          fs::exists(it->path() / "config.textproto", ec)) {
        staging = it->path().string();
      }
    }
    if (staging.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  WaitForExit(pid);
  ASSERT_FALSE(staging.empty()) << "the sweep ended before it could be killed";
  // The reruns need not be long (under the sanitizers three runs of 10,000 jobs take minutes).
  WriteFile(config_,
            "cluster { servers { count: 1 gpus: 4 cpus: 12 memory_gb: 200 } }\n"
            "workload { generator { jobs_per_hour: 60 num_jobs: 20 } }\n");
  WriteFile(staging + "/NOTES.txt", "mine");
  ExpectRefused(RunTroupe(args), "was not written by troupe");
  EXPECT_EQ(ReadFile(staging + "/NOTES.txt"), "mine");
  fs::remove(staging + "/NOTES.txt");
  const ProcessResult again = RunTroupe(args);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadCsv(out + "/sweep.csv").size(), 3u);
  EXPECT_FALSE(fs::exists(staging));
  EXPECT_TRUE(IsTroupeFolder(out));
}

// Paths no folder can have are refused up front, naming the flag.
TEST_F(OutputSafety, PathsNoFolderCanHaveAreRefused) {
  const auto before = Entries(dir_);
  ExpectRefused(Run(dir_ + "/" + std::string(5000, 'a')), "too long");
  ExpectRefused(Run(dir_ + "/" + std::string(300, 'b') + "/run"), "too long");
  ExpectRefused(Run(dir_ + "/" + std::string(250, 'c')), "too long");  // no room for .tmp-PID
  EXPECT_EQ(Entries(dir_), before);
  ExpectRefused(Run("/proc/self/x"), "/proc");
  ExpectRefused(Run("/proc/version/x"), "/proc");
  ExpectRefused(Run("/sys/troupe-run"), "/sys");
  ExpectRefused(
      RunTroupe({"sweep", config_, "--over", "scheduler.mechanism=tune", "--out", "/proc/self/x"}),
      "--out /proc/self/x");
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
  EXPECT_EQ(first.result.summary.auc(), second.result.summary.auc());
}

}  // namespace
}  // namespace troupe::testing
