// Acceptance of the external scheduler (docs/external-scheduler.md): `troupe run` with
// scheduler.mechanism_name "external" and a Python scheduler process over the wire.
// scripts/external_fifo_proportional.py writes the built-in FIFO + proportional run's jobs.csv
// and rounds.csv byte for byte (multi-GPU jobs on 4-GPU servers, so jobs are spread too); a
// Python scheduler whose every answer overcommits is refused each round with the reason, and
// the fallback (proportional) places the rounds: the same files again. Bounded: the processes
// are waited for, and troupe waits at most connect_timeout_s for the scheduler.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <sstream>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kPython[] = "/usr/bin/python3";

bool PythonProtobufAvailable() {
  const std::string dir = FreshDir("external-pycheck");
  const pid_t pid =
      SpawnWithLogs({kPython, "-c", "import google.protobuf"}, dir + "/out", dir + "/err");
  return access("/usr/bin/protoc", X_OK) == 0 && WaitForExit(pid) == 0;
}

// Under a python3 that lacks a module a script needs (blocked here by a package of that name first
// on PYTHONPATH that refuses to import, as under a python3 that is not Debian's), each script says
// which one and how to install it in one line, exit status 2, rather than a traceback that ends in
// "No module named google".
TEST(ExternalSchedulerRun, ScriptsNameAMissingModuleInOneLine) {
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  const std::string dir = FreshDir("python-missing-module");
  const std::vector<std::string> client = {"--port-file", dir + "/port", "--secret-file",
                                           dir + "/secret"};
  struct Case {
    std::string script, blocked, line;
    std::vector<std::string> args;
  };
  for (const Case& c : std::vector<Case>{
           {"scripts/external_fifo_proportional.py", "google",
            "external_fifo_proportional.py: " + std::string(kPython) +
                " has no Python module google.protobuf: install it with `apt-get install "
                "python3-protobuf` (scripts/install-deps.sh)\n",
            client},
           {"scripts/agent_example.py", "google", "`apt-get install python3-protobuf`", client},
           {"scripts/agent_example.py", "numpy", "`apt-get install python3-numpy`", client},
           {"scripts/plot.py",
            "matplotlib",
            "troupe report: " + std::string(kPython) +
                " has no Python module matplotlib: install it with `apt-get install "
                "python3-matplotlib`",
            {dir}},
       }) {
    const std::string blocker = dir + "/" + c.blocked;
    std::filesystem::create_directories(blocker + "/" + c.blocked);
    WriteFile(blocker + "/" + c.blocked + "/__init__.py", "raise ImportError('blocked')\n");
    std::vector<std::string> argv = {"/usr/bin/env", "PYTHONPATH=" + blocker, kPython,
                                     SourcePath(c.script)};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const std::string err_path = blocker + "/" + std::filesystem::path(c.script).stem().string();
    const pid_t pid = SpawnWithLogs(argv, err_path + ".out", err_path + ".err");
    EXPECT_EQ(WaitForExit(pid), 2) << c.script;
    const std::string err = ReadFile(err_path + ".err");
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << c.script << ": " << err;
    EXPECT_NE(err.find(c.line), std::string::npos) << c.script << ": " << err;
  }
}

// 4 servers of 4 GPUs; 1-, 2-, 4- and 8-GPU jobs arriving faster than they finish.
constexpr char kFourServers[] =
    "cluster { servers { count: 4 gpus: 4 cpus: 12 memory_gb: 250 } }\n";
// The same on two GPU types: a job tries its fastest type first.
constexpr char kTwoTypes[] =
    "cluster { servers { count: 2 gpus: 4 cpus: 12 memory_gb: 250 gpu_type: \"k80\" }\n"
    "          servers { count: 2 gpus: 4 cpus: 12 memory_gb: 250 gpu_type: \"v100\" } }\n";

std::string Config(const std::string& cluster, const std::string& out_dir,
                   const std::string& extra) {
  return cluster + "workload { generator { jobs_per_hour: 40 num_jobs: 60 multi_gpu: true } }\n" +
         "scheduler { policy: fifo " + extra + "round_s: 300 }\n" +
         "run { mode: emulated seed: 7 out_dir: \"" + out_dir + "\" }\n";
}

// Runs `dir`/external.textproto against the Python scheduler `argv` (port and secret appended);
// returns the scheduler's stdout.
std::string RunWithScheduler(const std::string& dir, std::vector<std::string> argv,
                             const std::string& cluster = kFourServers) {
  WriteFile(dir + "/secret", "external-acceptance-secret\n");
  WriteFile(dir + "/external.textproto",
            Config(cluster, dir + "/external", "mechanism_name: \"external\" ") +
                "external_scheduler { secret_file: \"" + dir + "/secret\" port_file: \"" + dir +
                "/port\" connect_timeout_s: 30 answer_timeout_s: 30 }\n");
  // Before the thread that spawns troupe: setenv beside a posix_spawn reading environ is a race.
  setenv("TROUPE_AGENT_CACHE", (dir + "/pycache").c_str(), 1);
  auto troupe = std::async(std::launch::async, [&] {
    return RunTroupe({"run", dir + "/external.textproto", "--quiet"});
  });
  argv.insert(argv.end(), {"--port-file", dir + "/port", "--secret-file", dir + "/secret"});
  const pid_t scheduler = SpawnWithLogs(argv, dir + "/scheduler.out", dir + "/scheduler.err");
  EXPECT_EQ(WaitForExit(scheduler), 0) << ReadFile(dir + "/scheduler.err");
  const ProcessResult run = troupe.get();
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return ReadFile(dir + "/scheduler.out");
}

void ExpectSameRecords(const std::string& dir, const std::string& cluster = kFourServers) {
  WriteFile(dir + "/builtin.textproto",
            Config(cluster, dir + "/builtin", "mechanism: proportional "));
  const ProcessResult builtin = RunTroupe({"run", dir + "/builtin.textproto", "--quiet"});
  ASSERT_EQ(builtin.exit_code, 0) << builtin.err;
  const std::string jobs = ReadFile(dir + "/builtin/jobs.csv");
  ASSERT_GT(ReadCsv(dir + "/builtin/jobs.csv").size(), 50u);
  EXPECT_EQ(ReadFile(dir + "/external/jobs.csv"), jobs);
  EXPECT_EQ(ReadFile(dir + "/external/rounds.csv"), ReadFile(dir + "/builtin/rounds.csv"));
}

TEST(ExternalSchedulerRun, PythonFifoProportionalWritesTheBuiltInRecords) {
  if (!PythonProtobufAvailable()) {
    GTEST_SKIP() << "python3-protobuf or protobuf-compiler is not installed "
                    "(scripts/install-deps.sh installs them)";
  }
  const std::string dir = FreshDir("external-fifo");
  const std::string out =
      RunWithScheduler(dir, {kPython, SourcePath("scripts/external_fifo_proportional.py")});
  EXPECT_NE(out.find("\"refusals\": 0"), std::string::npos) << out;
  EXPECT_NE(out.find("\"goodbye\": \"the run ended\""), std::string::npos) << out;
  ExpectSameRecords(dir);
}

TEST(ExternalSchedulerRun, PythonFifoProportionalIsTypeAwareLikeTheBuiltIn) {
  if (!PythonProtobufAvailable()) GTEST_SKIP() << "python3-protobuf is not installed";
  const std::string dir = FreshDir("external-types");
  const std::string out = RunWithScheduler(
      dir, {kPython, SourcePath("scripts/external_fifo_proportional.py")}, kTwoTypes);
  EXPECT_NE(out.find("\"refusals\": 0"), std::string::npos) << out;
  ExpectSameRecords(dir, kTwoTypes);
}

// Every answer asks for all of server 0's CPUs twice over for the first job.
constexpr char kOvercommitting[] = R"(
import sys
sys.path.insert(0, sys.argv[1])
import troupe_external as te
args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
client = te.ExternalScheduler("127.0.0.1", te.wait_for_port(args["--port-file"]),
                              te.read_secret(args["--secret-file"]))
client.connect()
def greedy(state):
    jobs = list(state.jobs)
    if not jobs:
        return []
    return [(jobs[0].id, [(0, jobs[0].gpus, 25.0, 1.0)])]
client.serve(greedy)
reasons = set(r[1].split(":")[1].strip() for r in client.refusals)
print(len(client.refusals), client.asks, sorted(reasons), client.refusals[0][2])
)";

TEST(ExternalSchedulerRun, OvercommittingAnswersAreRefusedAndTheFallbackPlacesTheRounds) {
  if (!PythonProtobufAvailable()) GTEST_SKIP() << "python3-protobuf is not installed";
  const std::string dir = FreshDir("external-overcommit");
  const std::string out =
      RunWithScheduler(dir, {kPython, "-c", kOvercommitting, SourcePath("scripts")});
  // Every non-empty ask refused, each for its overcommit (or, for an 8-GPU job, its GPU count).
  std::istringstream line(out);
  int refusals = 0, asks = 0;
  line >> refusals >> asks;
  EXPECT_GT(refusals, 20) << out;
  EXPECT_NE(out.find("overcommits server 0"), std::string::npos) << out;
  EXPECT_NE(out.find("proportional"), std::string::npos) << out;
  ExpectSameRecords(dir);
}

}  // namespace
}  // namespace troupe::testing
