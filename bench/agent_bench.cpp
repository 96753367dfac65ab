// Benchmarks of the job agent gateway (agent/, docs/agent.md) over loopback TCP.
//
//   BM_AgentLeaseRoundTrip   troupe -> agent -> troupe: the gateway sends a registered agent
//                            LeaseEnd (AgentLink::Send, as the job proxy does), the agent reads
//                            it and answers CheckpointDone, and the job's sink receives it. One
//                            iteration is one round trip; the time per iteration is the latency.
//   BM_AgentHeartbeats/N     N registered agents on one gateway (N = 1000 raises the connection
//                            cap), each sending a heartbeat per iteration; an iteration ends when
//                            the gateway has delivered all N to their jobs' sinks. items/s is the
//                            heartbeats one gateway thread serves; a read timeout of 2 s closes any
//                            agent the gateway falls behind on, which fails the benchmark.
// Run: build-agent/bench/troupe_agent_bench (numbers in docs/performance.md).
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "agent/agent_client.hpp"
#include "agent/agent_gateway.hpp"

namespace troupe::agent_wire {
namespace {

constexpr char kSecret[] = "bench-secret";

// A gateway whose jobs count the frames they receive.
struct CountingGateway {
  explicit CountingGateway(int32_t max_connections) {
    spdlog::set_level(spdlog::level::err);  // agents leaving at teardown are no news here
    GatewayOptions options;
    options.secret = kSecret;
    options.max_connections = max_connections;
    options.read_timeout_s = 2;
    options.heartbeat_s = 0.5;
    gateway = std::make_unique<AgentGateway>(
        options, [this](const agent::Register&, const std::shared_ptr<AgentLink>& link) {
          Admission a;
          a.job_id = next_id++;
          links.push_back(link);  // the gateway's thread only, before the timed loop
          a.sink = [this](AgentEvent e) {
            if (!e.closed) frames.fetch_add(1, std::memory_order_release);
          };
          return a;
        });
    if (!gateway->Start().ok()) std::abort();
  }
  ~CountingGateway() { gateway->Stop(); }

  void WaitFrames(int64_t at_least) const {
    while (frames.load(std::memory_order_acquire) < at_least) std::this_thread::yield();
  }

  std::unique_ptr<AgentGateway> gateway;
  std::vector<std::shared_ptr<AgentLink>> links;
  std::atomic<int64_t> frames{0};
  int64_t next_id = 0;
};

agent::JobRequest Job() {
  agent::JobRequest job;
  job.set_model("res18");
  job.set_gpus(1);
  job.set_iterations(1000);
  return job;
}

void BM_AgentLeaseRoundTrip(benchmark::State& state) {
  CountingGateway gw(4);
  AgentClient client;
  int64_t job_id = 0;
  if (!client.Connect("127.0.0.1", gw.gateway->port()).ok() ||
      !client.Register(Job(), kSecret, &job_id).ok()) {
    state.SkipWithError("cannot register");
    return;
  }
  agent::Envelope lease_end, checkpoint, got;
  lease_end.mutable_lease_end()->set_round(1);
  checkpoint.mutable_checkpoint_done()->set_round(1);
  checkpoint.mutable_checkpoint_done()->set_iterations_done(10);
  int64_t expected = gw.frames.load();
  for (auto _ : state) {
    gw.links.at(0)->Send(lease_end);
    if (!client.Read(&got, std::chrono::seconds(5)).ok() || !got.has_lease_end()) {
      state.SkipWithError("no lease_end");
      break;
    }
    if (!client.Send(checkpoint).ok()) {  // else WaitFrames would wait for a frame never sent
      state.SkipWithError("cannot send checkpoint_done");
      break;
    }
    gw.WaitFrames(++expected);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AgentLeaseRoundTrip)->UseRealTime();

void BM_AgentHeartbeats(benchmark::State& state) {
  const int agents = static_cast<int>(state.range(0));
  CountingGateway gw(agents + 16);
  std::vector<std::unique_ptr<AgentClient>> clients;
  for (int i = 0; i < agents; ++i) {
    auto client = std::make_unique<AgentClient>();
    int64_t job_id = 0;
    if (!client->Connect("127.0.0.1", gw.gateway->port()).ok() ||
        !client->Register(Job(), kSecret, &job_id).ok()) {
      state.SkipWithError("cannot register every agent");
      return;
    }
    clients.push_back(std::move(client));
  }
  agent::Envelope heartbeat;
  heartbeat.mutable_heartbeat()->set_sequence(1);
  const StatusOr<std::string> framed = Frame(heartbeat);
  if (!framed.ok()) return state.SkipWithError(framed.status().message().c_str());
  const std::string& frame = *framed;
  int64_t expected = gw.frames.load();
  for (auto _ : state) {
    bool sent = true;
    for (auto& client : clients) sent = client->SendBytes(frame).ok() && sent;
    if (!sent) {  // else WaitFrames would wait for frames never sent
      state.SkipWithError("cannot send every heartbeat");
      break;
    }
    expected += agents;
    gw.WaitFrames(expected);
  }
  const GatewayCounters& c = gw.gateway->counters();
  if (c.open.load() != agents || c.timed_out.load() != 0) {
    state.SkipWithError("the gateway dropped agents");
  }
  state.SetItemsProcessed(state.iterations() * agents);
  state.counters["agents"] = static_cast<double>(c.open.load());
}
BENCHMARK(BM_AgentHeartbeats)->Arg(10)->Arg(100)->Arg(1000)->UseRealTime();

}  // namespace
}  // namespace troupe::agent_wire

BENCHMARK_MAIN();
