// Acceptance of the job agent protocol (docs/agent.md): `troupe run` in real mode under TUNE with
// one emulated job and a gateway expecting two agents; two Python training processes
// (scripts/agent_example.py) register, receive leases, checkpoint when leases end, and finish;
// the run directory's jobs.csv holds all three jobs.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <future>
#include <set>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kPython[] = "/usr/bin/python3";

bool PythonProtobufAvailable() {
  const std::string dir = FreshDir("pycheck");
  const pid_t pid =
      SpawnWithLogs({kPython, "-c", "import google.protobuf, numpy"}, dir + "/out", dir + "/err");
  return access("/usr/bin/protoc", X_OK) == 0 && WaitForExit(pid) == 0;
}

TEST(AgentRun, TwoPythonAgentsAndAnEmulatedJobFinishUnderTune) {
  if (!PythonProtobufAvailable()) {
    GTEST_SKIP() << "python3-protobuf, python3-numpy or protobuf-compiler is not installed "
                    "(scripts/install-deps.sh installs them)";
  }
  const std::string dir = FreshDir("agent-run");
  WriteFile(dir + "/trace.csv", "job_id,model,arrival_s,iterations,gpus\n0,res18,0,2000,1\n");
  WriteFile(dir + "/secret", "acceptance-secret\n");
  WriteFile(dir + "/run.textproto",
            "cluster { servers { count: 1 gpus: 4 cpus: 24 memory_gb: 500 } }\n"
            "workload { trace_file: \"" +
                dir +
                "/trace.csv\" }\n"
                "scheduler { mechanism: tune round_s: 300 }\n"
                "run { mode: real time_scale: 3000 out_dir: \"" +
                dir +
                "/run\" }\n"
                "agents { secret_file: \"" +
                dir + "/secret\" expected_jobs: 2 port_file: \"" + dir +
                "/port\" heartbeat_s: 0.2 read_timeout_s: 3 registration_timeout_s: 30 }\n");
  auto troupe = std::async(std::launch::async, [&] {
    return RunTroupe({"run", dir + "/run.textproto", "--quiet"});
  });
  std::vector<pid_t> agents;
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> argv = {kPython,         SourcePath("scripts/agent_example.py"),
                                     "--port-file",   dir + "/port",
                                     "--secret-file", dir + "/secret",
                                     "--iterations",  "300",
                                     "--step-s",      "0.001",
                                     "--seed",        std::to_string(i)};
    if (i == 0) argv.insert(argv.end(), {"--model", "res18"});  // the other: measured profile
    setenv("TROUPE_AGENT_CACHE", (dir + "/pycache").c_str(), 1);
    agents.push_back(SpawnWithLogs(argv, dir + "/agent" + std::to_string(i) + ".out",
                                   dir + "/agent" + std::to_string(i) + ".err"));
  }
  for (size_t i = 0; i < agents.size(); ++i) {
    EXPECT_EQ(WaitForExit(agents[i]), 0) << ReadFile(dir + "/agent" + std::to_string(i) + ".err");
  }
  const ProcessResult run = troupe.get();
  ASSERT_EQ(run.exit_code, 0) << run.err;

  for (int i = 0; i < 2; ++i) {
    const std::string out = ReadFile(dir + "/agent" + std::to_string(i) + ".out");
    EXPECT_NE(out.find("\"iterations\": 300"), std::string::npos) << out;
    EXPECT_NE(out.find("\"goodbye\": \"job finished\""), std::string::npos) << out;
    // 300 iterations of at least 1 ms in 0.1 s leases: several leases, each ended by a checkpoint.
    const size_t leases = out.find("\"leases\": ");
    ASSERT_NE(leases, std::string::npos) << out;
    EXPECT_GE(std::stoi(out.substr(leases + 10)), 2) << out;
    const size_t checkpoints = out.find("\"checkpoints\": ");
    ASSERT_NE(checkpoints, std::string::npos) << out;
    EXPECT_GE(std::stoi(out.substr(checkpoints + 15)), 2) << out;
  }
  const auto jobs = ReadCsv(dir + "/run/jobs.csv");
  ASSERT_EQ(jobs.size(), 3u);
  std::map<std::string, std::map<std::string, std::string>> by_id;
  for (const auto& row : jobs) by_id[row.at("job_id")] = row;
  ASSERT_EQ(by_id.count("0"), 1u);
  ASSERT_EQ(by_id.count("1000000"), 1u);
  ASSERT_EQ(by_id.count("1000001"), 1u);
  // Either agent may register first: one named a catalogue model, the other sent its profile.
  std::set<std::string> agent_models = {by_id["1000000"].at("model"), by_id["1000001"].at("model")};
  EXPECT_EQ(agent_models, (std::set<std::string>{"res18", "numpy-linreg"}));
  for (const auto& [id, row] : by_id) {
    EXPECT_GE(std::stod(row.at("end_s")), 0) << "job " << id << " did not finish";
    EXPECT_GE(std::stoi(row.at("rounds_run")), 1) << "job " << id;
    if (row.count("failure")) {
      EXPECT_EQ(row.at("failure"), "") << "job " << id;
    }
  }
}

}  // namespace
}  // namespace troupe::testing
