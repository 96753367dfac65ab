// Bad input is an answer: each case below gets one error line on stderr naming the file and line
// (and column or field), exit status 2, and no run directory. So is running out of memory: one
// line and exit status 3, never an abort.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kGoodCluster[] =
    "cluster { servers { count: 2 gpus: 8 cpus: 24 memory_gb: 500 } }\n";

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshDir("bad"); }

  // Runs `troupe run` on a config text and checks the common contract; returns stderr.
  std::string RunExpectingError(const std::string& config_text,
                                const std::vector<std::string>& extra = {}) {
    const std::string config = dir_ + "/config.textproto";
    WriteFile(config, config_text);
    const std::string out = dir_ + "/out";
    std::vector<std::string> args = {"run", config, "--out", out};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult r = RunTroupe(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << "bad input left a run directory";
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    return r.err;
  }

  std::string Trace(const std::string& body) {
    const std::string path = dir_ + "/trace.csv";
    WriteFile(path, "job_id,model,arrival_s,iterations,gpus\n" + body);
    return std::string(kGoodCluster) + "workload { trace_file: \"" + path + "\" }\n";
  }

  std::string dir_;
};

TEST_F(BadInput, UnknownFieldNamesFileLineAndColumn) {
  const std::string err = RunExpectingError(std::string(kGoodCluster) + "run {\n  sed: 3\n}\n");
  EXPECT_NE(err.find("config.textproto:3:3"), std::string::npos) << err;
  EXPECT_NE(err.find("sed"), std::string::npos) << err;
}

TEST_F(BadInput, WrongTypeNamesTheLine) {
  const std::string err =
      RunExpectingError(std::string(kGoodCluster) + "run { seed: \"seven\" }\n");
  EXPECT_NE(err.find("config.textproto:2:"), std::string::npos) << err;
}

TEST_F(BadInput, NegativeOrZeroCapacityNamesTheField) {
  std::string err =
      RunExpectingError("cluster { servers { count: 2 gpus: 8 cpus: -4 memory_gb: 500 } }\n");
  EXPECT_NE(err.find("cluster.servers[0].cpus"), std::string::npos) << err;
  err = RunExpectingError("cluster { servers { count: 2 gpus: 0 cpus: 4 memory_gb: 500 } }\n");
  EXPECT_NE(err.find("cluster.servers[0].gpus"), std::string::npos) << err;
}

TEST_F(BadInput, JobNeedingMoreGpusThanTheClusterNamesTheTraceLine) {
  const std::string err = RunExpectingError(Trace("0,res50,0,100,1\n1,res50,5,100,32\n"));
  EXPECT_NE(err.find("trace.csv:3"), std::string::npos) << err;
  EXPECT_NE(err.find("32 GPUs"), std::string::npos) << err;
}

TEST_F(BadInput, MissingTraceFileNamesIt) {
  const std::string err = RunExpectingError(std::string(kGoodCluster) +
                                            "workload { trace_file: \"/nonexistent/t.csv\" }\n");
  EXPECT_NE(err.find("/nonexistent/t.csv"), std::string::npos) << err;
}

TEST_F(BadInput, TraceLineWithAMissingColumn) {
  const std::string err = RunExpectingError(Trace("0,res50,0,100,1\n1,res50,5,100\n"));
  EXPECT_NE(err.find("trace.csv:3"), std::string::npos) << err;
}

TEST_F(BadInput, TraceLineWithANonNumber) {
  const std::string err = RunExpectingError(Trace("0,res50,zero,100,1\n"));
  EXPECT_NE(err.find("trace.csv:2"), std::string::npos) << err;
  EXPECT_NE(err.find("arrival_s"), std::string::npos) << err;
}

TEST_F(BadInput, BadSetOverrideNamesIt) {
  const std::string err = RunExpectingError(kGoodCluster, {"--set", "scheduler.polcy=srtf"});
  EXPECT_NE(err.find("scheduler.polcy"), std::string::npos) << err;
}

// Runs the troupe binary as `bash -c '<shell> "$0" "$@"' troupe ARGS...`: under a timeout, so that
// an input that blocks fails the test instead of hanging it, or a memory limit.
ProcessResult RunTroupeUnder(const std::string& shell, const std::vector<std::string>& args) {
  const std::string dir = FreshDir("under");
  std::vector<std::string> argv = {"/bin/bash", "-c", shell + " \"$0\" \"$@\"", TROUPE_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult r;
  r.exit_code = WaitForExit(SpawnWithLogs(argv, dir + "/stdout", dir + "/stderr"));
  r.out = ReadFile(dir + "/stdout");
  r.err = ReadFile(dir + "/stderr");
  return r;
}

// A blocked read ends after this, with timeout's status 124.
constexpr char kTimeout[] = "exec timeout 120";

TEST_F(BadInput, InputsThatAreNotRegularFilesAreRefusedNamingFieldAndPath) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string out = dir_ + "/out";
  const std::string ps = "paramserver { nodes: 2 batch_size: 32 batches: 3 criteo_file: \"";
  const struct {
    std::string config, field, path, type;
  } cases[] = {
      {std::string(kGoodCluster) + "workload { trace_file: \"" + fifo + "\" }\n",
       "workload.trace_file", fifo, "a FIFO"},
      {ps + fifo + "\" }\n", "paramserver.criteo_file", fifo, "a FIFO"},
  };
  for (const auto& c : cases) {
    const std::string config = dir_ + "/config.textproto";
    WriteFile(config, c.config);
    ProcessResult r = RunTroupeUnder(kTimeout, {"run", config, "--out", out});
    EXPECT_EQ(r.exit_code, 2) << c.config << r.err;
    EXPECT_EQ(r.err, "troupe: " + config + ": " + c.field + ": '" + c.path + "' is " + c.type +
                         ", not a regular file; troupe reads its inputs from regular files\n");
    EXPECT_FALSE(std::filesystem::exists(out)) << "bad input left a run directory";
  }
  for (const char* command : {"run", "validate"}) {
    ProcessResult r = RunTroupeUnder(kTimeout, {command, fifo});
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err;
    EXPECT_EQ(r.err, "troupe: config file: '" + fifo +
                         "' is a FIFO, not a regular file; troupe reads its inputs from regular "
                         "files\n");
  }
}

// AddressSanitizer reserves terabytes of address space: it cannot start under `ulimit -v`.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

// 4 GB of address space: plenty for these runs, far less than what a run sized by its largest
// job id (10^12) would take.
constexpr char kUnder4GB[] = "ulimit -v 4000000 && exec timeout 300";

TEST_F(BadInput, HugeJobIdsWithEveryJobCrashedRunUnderAMemoryLimit) {
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer cannot run under ulimit -v";
  const std::string config = dir_ + "/config.textproto";
  WriteFile(config, Trace("0,res50,0,100,1\n999999999999,res50,5,100,1\n"));
  const std::string out = dir_ + "/out";
  ProcessResult r = RunTroupeUnder(
      kUnder4GB, {"run", config, "--out", out, "--quiet", "--fault", "crash:job:*@1+5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto jobs = ReadCsv(out + "/jobs.csv");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_TRUE(std::any_of(jobs.begin(), jobs.end(),
                          [](const auto& job) { return job.at("job_id") == "999999999999"; }));
  // Job 0 runs at 1 s; the other arrives at 5 s, after the crash: it had no actor to kill.
  EXPECT_NE(ReadFile(out + "/faults.csv").find("killed the actors of 1 of its 2 jobs (0)"),
            std::string::npos);
}

// /dev/zero never ends: read line by line it would fill any memory (hence the limit here).
TEST_F(BadInput, DevZeroAsTraceOrCriteoFileIsRefusedUnderAMemoryLimit) {
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer cannot run under ulimit -v";
  const std::string config = dir_ + "/config.textproto";
  for (const char* field : {"workload.trace_file", "paramserver.criteo_file"}) {
    WriteFile(config, field[0] == 'w'
                          ? std::string(kGoodCluster) + "workload { trace_file: \"/dev/zero\" }\n"
                          : "paramserver { nodes: 2 batch_size: 32 batches: 3 criteo_file: "
                            "\"/dev/zero\" }\n");
    ProcessResult r = RunTroupeUnder(kUnder4GB, {"run", config, "--out", dir_ + "/out"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "troupe: " + config + ": " + field +
                         ": '/dev/zero' is a character device, not a regular file; troupe reads "
                         "its inputs from regular files\n");
  }
}

TEST_F(BadInput, OutOfMemoryIsOneLineAndExitStatus3) {
  if (kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer cannot run under ulimit -v";
  // A config file of 2 GiB (sparse: no disk) is read whole: more than 1.5 GB of address space.
  const std::string config = dir_ + "/huge.textproto";
  WriteFile(config, "");
  std::filesystem::resize_file(config, uintmax_t{2} << 30);
  ProcessResult r = RunTroupeUnder("ulimit -v 1500000 && exec timeout 300", {"validate", config});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err, "troupe: out of memory while loading the config\n");
}

// kGoodCluster with a workload that ends: a config that would run.
constexpr char kRunnable[] =
    "cluster { servers { count: 2 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
    "workload { generator { num_jobs: 4 } }\n";

// A fault on a `troupe node` in a run that places none would fire nowhere: refused, naming the
// flag.
TEST_F(BadInput, NodeFaultWithoutPlacedNodesNamesTheFlag) {
  const std::string flag = "crash:node:127.0.0.1:4000@10";
  const std::string err = RunExpectingError(kRunnable, {"--fault", flag});
  EXPECT_EQ(err.rfind("troupe: --fault '" + flag + "': ", 0), 0u) << err;
  EXPECT_NE(err.find("no `troupe node` of this run"), std::string::npos) << err;
}

// deployment.credentials_dir is checked whenever it is set, even when no node uses it.
TEST_F(BadInput, GarbageCredentialsDirIsRefusedWithoutPlacedNodes) {
  std::string err = RunExpectingError(std::string(kRunnable) + "deployment { credentials_dir: \"" +
                                      dir_ + "/nowhere\" }\n");
  EXPECT_NE(err.find("deployment.credentials_dir: " + dir_ + "/nowhere/ca.pem"), std::string::npos)
      << err;
  std::filesystem::create_directories(dir_ + "/empty");
  err = RunExpectingError(std::string(kRunnable) + "deployment { credentials_dir: \"" + dir_ +
                          "/empty\" }\n");
  EXPECT_NE(err.find("deployment.credentials_dir: " + dir_ + "/empty/ca.pem"), std::string::npos)
      << err;
}

// An error quotes at most a bounded prefix of a huge value (a --set value, a config string, a
// trace field), with its size: one short line, not the value echoed whole.
TEST_F(BadInput, HugeValuesAreQuotedByAPrefix) {
  const std::string huge(100'000, 'x');  // under the 128 KiB a single argument may have
  const std::string size = " (1000";     // "…' (100000 bytes)", or the whole assignment's size
  for (const std::vector<std::string>& set :
       {std::vector<std::string>{"--set", "run.mode=" + huge},
        std::vector<std::string>{"--set", "cluster.servers[0].nme=" + huge},
        std::vector<std::string>{"--set", "cluster.servers[0].gpus=" + huge},
        std::vector<std::string>{"--set", "backends.compute=" + huge},
        std::vector<std::string>{"--fault", "crash:" + huge + "@0"}}) {
    const std::string err = RunExpectingError(kRunnable, set);
    EXPECT_LT(err.size(), 1000u) << err.substr(0, 1000);
    EXPECT_NE(err.find(size), std::string::npos) << err.substr(0, 1000);
  }
  std::string err =
      RunExpectingError(std::string(kRunnable) + "backends { compute: \"" + huge + "\" }\n");
  EXPECT_LT(err.size(), 1000u) << err.substr(0, 1000);
  EXPECT_NE(err.find("backends.compute"), std::string::npos) << err.substr(0, 1000);
  err = RunExpectingError(Trace("0,res50," + huge + ",100,1\n"));
  EXPECT_LT(err.size(), 1000u) << err.substr(0, 1000);
  EXPECT_NE(err.find("trace.csv:2"), std::string::npos) << err.substr(0, 1000);
  EXPECT_NE(err.find(size), std::string::npos) << err.substr(0, 1000);
}

TEST(Cli, ValidateAndVersion) {
  ProcessResult version = RunTroupe({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("troupe "), std::string::npos);
  ProcessResult ok = RunTroupe({"validate", SourcePath("configs/default.textproto")});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("128 GPUs"), std::string::npos) << ok.out;
  ProcessResult missing = RunTroupe({"validate", "/nonexistent.textproto"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent.textproto"), std::string::npos);
}

}  // namespace
}  // namespace troupe::testing
