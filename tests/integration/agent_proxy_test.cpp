// Agent-backed jobs inside a real-mode run (ExecuteRun, as `troupe run` does), with C++ agents
// (agent/agent_client.hpp): the scheduler cannot tell them from emulated jobs, and an
// agent that vanishes mid-lease fails its job only — its lease is freed and the others finish.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "agent/agent_client.hpp"
#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "runner/cluster/cluster_run.hpp"
#include "runner/cluster/run_setup.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

using agent_wire::AgentClient;
using std::chrono::milliseconds;
constexpr char kSecret[] = "proxy-test-secret";

uint16_t WaitForPort(const std::string& path) {
  for (int i = 0; i < 1000; ++i) {
    std::ifstream in(path);
    int port = 0;
    if (in >> port && port > 0) return static_cast<uint16_t>(port);
    std::this_thread::sleep_for(milliseconds(10));
  }
  return 0;
}

struct AgentOutcome {
  Status status;
  int64_t job_id = -1;
  int leases = 0;
  int lost_leases = 0;
  std::string goodbye;
};

// A well-behaved agent: trains `per_lease` iterations each lease, checkpoints on LeaseEnd,
// heartbeats while it waits, and sends Finished once its iterations are done. `registered`, when
// given, is told once the gateway has answered its registration (or refused it).
AgentOutcome RunAgent(uint16_t port, int64_t iterations, int64_t per_lease, bool vanish,
                      std::promise<void>* registered = nullptr) {
  AgentOutcome o;
  AgentClient client;
  agent::JobRequest job;
  job.set_model("res18");
  job.set_gpus(1);
  job.set_iterations(iterations);
  o.status = client.Connect("127.0.0.1", port);
  if (o.status.ok()) o.status = client.Register(job, kSecret, &o.job_id);
  if (registered != nullptr) registered->set_value();
  if (!o.status.ok()) return o;
  int64_t done = 0;
  agent::Envelope frame, reply;
  for (;;) {
    Status s = client.Read(&frame, milliseconds(100));
    if (!s.ok() && s.message() == "timed out") {
      reply.mutable_heartbeat()->set_sequence(1);
      // Unchecked on purpose, here and below: a send fails only on a closed link, and the next
      // Read reports how it ended (a goodbye, or the close), which is what the tests look at.
      (void)client.Send(reply);
      continue;
    }
    if (!s.ok()) {
      o.status = s;
      return o;
    }
    if (frame.has_goodbye()) {
      o.goodbye = frame.goodbye().reason();
      return o;
    }
    if (frame.has_lease_grant()) {
      ++o.leases;
      if (vanish) {  // mid-lease, without a word
        client.Close();
        return o;
      }
      const int64_t step = std::min(per_lease, iterations - done);
      if (done + step == iterations) {
        done += step;
        reply.mutable_finished()->set_iterations_done(step);
        (void)client.Send(reply);
      }
    }
    if (frame.has_lease_end() && frame.lease_end().lost()) {  // roll back: nothing was saved
      ++o.lost_leases;
      reply.mutable_checkpoint_done()->set_round(frame.lease_end().round());
      reply.mutable_checkpoint_done()->set_iterations_done(0);
      (void)client.Send(reply);
      continue;
    }
    if (frame.has_lease_end() && done < iterations) {
      const int64_t step = std::min(per_lease, iterations - done);
      done += step;
      reply.mutable_checkpoint_done()->set_round(frame.lease_end().round());
      reply.mutable_checkpoint_done()->set_iterations_done(step);
      (void)client.Send(reply);
    }
  }
}

// Runs `config` (with an agents block writing dir/port) in this process, as `troupe run` does.
std::future<RunResult> StartRun(const std::string& config) {
  config::RunConfig cfg;
  EXPECT_TRUE(ParseConfigText(config, "proxy.textproto", &cfg).ok());
  EXPECT_TRUE(ValidateConfig(cfg, "proxy.textproto").ok());
  return std::async(std::launch::async, [cfg] {
    RunResult result;
    RunPlan plan;
    Status s = PlanRun(cfg, "proxy.textproto", &plan);
    ExecuteOptions options;
    options.agents = cfg.agents();
    if (s.ok()) s = ExecuteRun(std::move(plan), options, &result);
    EXPECT_TRUE(s.ok()) << s.message();
    return result;
  });
}

TEST(AgentProxy, VanishedAgentFailsItsJobAndFreesItsLease) {
  const std::string dir = FreshDir("agent-proxy");
  WriteFile(dir + "/trace.csv", "job_id,model,arrival_s,iterations,gpus\n0,res18,0,900,1\n");
  // One GPU: the agents queue behind each other, so the survivor runs only if the vanished
  // agent's lease was freed.
  auto run = StartRun(
      "cluster { servers { count: 1 gpus: 1 cpus: 8 memory_gb: 100 } }\n"
      "workload { trace_file: \"" +
      dir +
      "/trace.csv\" }\n"
      "scheduler { mechanism: tune }\n"
      "run { mode: real time_scale: 6000 out_dir: \"" +
      dir +
      "/run\" }\n"
      "agents { secret: \"" +
      kSecret + "\" expected_jobs: 2 port_file: \"" + dir +
      "/port\" heartbeat_s: 0.05 read_timeout_s: 1 }\n");
  const uint16_t port = WaitForPort(dir + "/port");
  ASSERT_GT(port, 0);
  // The vanishing agent registers first, so FIFO leases it the GPU first (after the trace job).
  std::promise<void> doomed_registered;
  auto doomed = std::async(std::launch::async,
                           [&] { return RunAgent(port, 40, 10, true, &doomed_registered); });
  ASSERT_EQ(doomed_registered.get_future().wait_for(std::chrono::seconds(60)),
            std::future_status::ready)
      << "the gateway never answered the first agent's registration";
  auto survivor = std::async(std::launch::async, [&] { return RunAgent(port, 40, 10, false); });
  const AgentOutcome gone = doomed.get();
  const AgentOutcome ok = survivor.get();
  const RunResult result = run.get();

  ASSERT_TRUE(gone.status.ok()) << gone.status.message();
  EXPECT_EQ(gone.leases, 1);
  ASSERT_TRUE(ok.status.ok()) << ok.status.message();
  EXPECT_EQ(ok.goodbye, "job finished");
  EXPECT_EQ(ok.leases, 4);  // 40 iterations, 10 a lease
  ASSERT_EQ(result.jobs.size(), 3u);
  for (const JobRecord& job : result.jobs) {
    if (job.job_id == gone.job_id) {
      EXPECT_LT(job.end_s, 0);
      EXPECT_NE(job.failure, "") << "the vanished agent's job must be recorded as failed";
    } else {
      EXPECT_GE(job.end_s, 0) << "job " << job.job_id << " did not finish";
      EXPECT_EQ(job.failure, "") << "job " << job.job_id;
    }
  }
}

TEST(AgentProxy, LeaseLostToACrashedServerRollsTheAgentBack) {
  const std::string dir = FreshDir("agent-lost");
  WriteFile(dir + "/trace.csv", "job_id,model,arrival_s,iterations,gpus\n0,res18,0,100,1\n");
  // Rounds of 300 s last 0.5 wall seconds: the agent registers within the first round and runs
  // from 300 s on the only server, which dies at 450 s and is back at 1050 s.
  auto run = StartRun(
      "cluster { servers { count: 1 gpus: 2 cpus: 8 memory_gb: 100 } }\n"
      "workload { trace_file: \"" +
      dir +
      "/trace.csv\" }\n"
      "scheduler { mechanism: tune }\n"
      "run { mode: real time_scale: 600 out_dir: \"" +
      dir +
      "/run\" }\n"
      "faults { fault { kind: crash target: \"server:0\" at_s: 450 duration_s: "
      "600 } }\n"
      "agents { secret: \"" +
      kSecret + "\" expected_jobs: 1 port_file: \"" + dir +
      "/port\" heartbeat_s: 0.05 read_timeout_s: 2 }\n");
  const uint16_t port = WaitForPort(dir + "/port");
  ASSERT_GT(port, 0);
  const AgentOutcome agent = RunAgent(port, 20, 10, false);
  const RunResult result = run.get();
  ASSERT_TRUE(agent.status.ok()) << agent.status.message();
  EXPECT_EQ(agent.lost_leases, 1);
  EXPECT_EQ(agent.leases, 3);  // the lost one, then two of 10 iterations
  EXPECT_EQ(agent.goodbye, "job finished");
  ASSERT_EQ(result.jobs.size(), 2u);
  for (const JobRecord& job : result.jobs) {
    EXPECT_GE(job.end_s, 0) << "job " << job.job_id;
    if (job.job_id == agent.job_id) {
      EXPECT_GT(job.wasted_gpu_s, 0);
    }
  }
}

}  // namespace
}  // namespace troupe::testing
