// Acceptance of the job agent protocol (docs/agent.md): `troupe run` in real mode under TUNE with
// one emulated job and a gateway expecting two agents; two Python training processes
// (scripts/agent_example.py) register, receive leases, checkpoint when leases end, and finish;
// the run directory's jobs.csv holds all three jobs. And an agent that heartbeats but never
// answers LeaseEnd (a C++ agent, agent/agent_client.hpp) fails alone once
// agents.checkpoint_timeout_s has passed: the run ends and the other job finishes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <set>
#include <thread>

#include "agent/agent_client.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kPython[] = "/usr/bin/python3";
using std::chrono::milliseconds;
using std::chrono::steady_clock;

bool PythonProtobufAvailable() {
  const std::string dir = FreshDir("pycheck");
  const pid_t pid =
      SpawnWithLogs({kPython, "-c", "import google.protobuf, numpy"}, dir + "/out", dir + "/err");
  return access("/usr/bin/protoc", X_OK) == 0 && WaitForExit(pid) == 0;
}

// The port the gateway wrote to `path`, or 0 if none within about 20 s.
uint16_t WaitForPort(const std::string& path) {
  for (int i = 0; i < 2000; ++i) {
    std::ifstream in(path);
    int port = 0;
    if (in >> port && port > 0) return static_cast<uint16_t>(port);
    std::this_thread::sleep_for(milliseconds(10));
  }
  return 0;
}

// Waits up to `seconds` for child `pid`: its exit status, or -1 after killing it.
int WaitBounded(pid_t pid, double seconds) {
  const auto until = steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (steady_clock::now() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct StuckAgentOutcome {
  Status status;  // of Connect and Register
  int64_t job_id = -1;
  int lease_ends = 0;
  std::string ended_by;  // how the connection ended
};

// An agent that heartbeats every 50 ms but never answers LeaseEnd with CheckpointDone. It runs
// until the gateway ends its connection, or `give_up_at` (after the test killed a stuck run).
StuckAgentOutcome RunStuckAgent(uint16_t port, const std::string& secret,
                                steady_clock::time_point give_up_at) {
  StuckAgentOutcome o;
  agent_wire::AgentClient client;
  agent::JobRequest job;
  job.set_model("res18");
  job.set_gpus(1);
  job.set_iterations(1000);
  if (o.status = client.Connect("127.0.0.1", port); !o.status.ok()) return o;
  if (o.status = client.Register(job, secret, &o.job_id); !o.status.ok()) return o;
  agent::Envelope frame, heartbeat;
  heartbeat.mutable_heartbeat()->set_sequence(1);
  while (steady_clock::now() < give_up_at) {
    const Status read = client.Read(&frame, milliseconds(50));
    if (!read.ok() && read.message() != "timed out") {
      o.ended_by = read.message();
      return o;
    }
    if (read.ok() && frame.has_goodbye()) {
      o.ended_by = "goodbye: " + frame.goodbye().reason();
      return o;
    }
    if (read.ok() && frame.has_lease_end()) ++o.lease_ends;
    // Unchecked on purpose: a send fails only on a closed link, and the next Read says how it
    // ended (the goodbye or the close), which is what `ended_by` records.
    (void)client.Send(heartbeat);
  }
  o.ended_by = "gave up";
  return o;
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
  // Before the thread that spawns troupe: setenv beside a posix_spawn reading environ is a race.
  setenv("TROUPE_AGENT_CACHE", (dir + "/pycache").c_str(), 1);
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

// An agent that heartbeats but never checkpoints used to hold its lease, and the round, for ever.
// With agents.checkpoint_timeout_s it is a lost agent (docs/agent.md): its job is recorded as
// failed, the emulated job still finishes, and the run ends.
TEST(AgentRun, AnAgentThatNeverCheckpointsFailsItsJobAfterTheCheckpointTimeout) {
  const std::string dir = FreshDir("agent-no-checkpoint");
  const std::string secret = "checkpoint-timeout-secret";
  // Two GPUs: the emulated job needs rounds after the agent's unanswered LeaseEnd, and that
  // round closes only once the agent checkpoints or is taken for lost.
  WriteFile(dir + "/trace.csv", "job_id,model,arrival_s,iterations,gpus\n0,res18,0,6000,1\n");
  WriteFile(dir + "/run.textproto",
            "cluster { servers { count: 1 gpus: 2 cpus: 24 memory_gb: 500 } }\n"
            "workload { trace_file: \"" +
                dir +
                "/trace.csv\" }\n"
                "scheduler { mechanism: tune round_s: 300 }\n"
                "run { mode: real time_scale: 3000 out_dir: \"" +
                dir +
                "/run\" }\n"
                "agents { secret: \"" +
                secret + "\" expected_jobs: 1 port_file: \"" + dir +
                "/port\" heartbeat_s: 0.05 read_timeout_s: 3 registration_timeout_s: 30 "
                "checkpoint_timeout_s: 1 }\n");
  const pid_t troupe = SpawnWithLogs({TROUPE_BINARY, "run", dir + "/run.textproto"},
                                     dir + "/troupe.out", dir + "/troupe.err");
  ASSERT_GT(troupe, 0);
  const uint16_t port = WaitForPort(dir + "/port");
  if (port == 0) WaitBounded(troupe, 0);
  ASSERT_GT(port, 0) << ReadFile(dir + "/troupe.err");
  auto agent = std::async(std::launch::async, [&] {
    return RunStuckAgent(port, secret, steady_clock::now() + std::chrono::seconds(120));
  });
  // Without the timeout the run never ends: give it far longer than it needs, then kill it.
  const int exit_code = WaitBounded(troupe, 90);
  const StuckAgentOutcome stuck = agent.get();
  const std::string log = ReadFile(dir + "/troupe.out"), err = ReadFile(dir + "/troupe.err");
  ASSERT_EQ(exit_code, 0) << "the run did not end (killed after 90 s) or failed\n" << log << err;
  ASSERT_TRUE(stuck.status.ok()) << stuck.status.message();
  EXPECT_GE(stuck.lease_ends, 1) << "the agent never saw a LeaseEnd";
  EXPECT_NE(stuck.ended_by, "gave up");
  EXPECT_NE(log.find("no checkpoint_done for round"), std::string::npos) << log;

  const auto jobs = ReadCsv(dir + "/run/jobs.csv");
  ASSERT_EQ(jobs.size(), 2u);
  std::map<std::string, std::map<std::string, std::string>> by_id;
  for (const auto& row : jobs) by_id[row.at("job_id")] = row;
  ASSERT_EQ(by_id.count("0"), 1u);
  ASSERT_EQ(by_id.count(std::to_string(stuck.job_id)), 1u);
  const auto& lost = by_id[std::to_string(stuck.job_id)];
  EXPECT_NE(lost.at("failure").find("remote_link_unreachable"), std::string::npos)
      << lost.at("failure");
  EXPECT_LT(std::stod(lost.at("end_s")), 0) << "the agent's job must not count as finished";
  EXPECT_GE(std::stod(by_id["0"].at("end_s")), 0) << "the emulated job did not finish";
  if (by_id["0"].count("failure")) {  // an empty last field may be left out
    EXPECT_EQ(by_id["0"].at("failure"), "");
  }
}

}  // namespace
}  // namespace troupe::testing
