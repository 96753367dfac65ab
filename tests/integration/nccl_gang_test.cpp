// NCCL across processes (docs/gpu.md, "NCCL across processes"; actors/nccl_gang_part.hpp):
//   - part 0 collects the parts' joins, plans one rank per leased GPU and hands every part the
//     same unique id — or, when there is none, every part the reason (CPU, always run);
//   - the 128 bytes of the unique id cross CAF's middleman intact: part 0's collector in a child
//     process, the parts in the test's, over loopback (CPU, always run);
//   - a config asking for an NCCL gang where CUDA cannot run is refused before anything runs:
//     exit status 2, one line naming the field;
//   - the whole protocol over two `troupe node` processes and `troupe run`, with a stand-in
//     plugin whose communicator is a folder of files (CPU, always run);
//   - where two GPUs answer: a gang job of two 1-GPU servers on two `troupe node` processes, each
//     lending one GPU, all-reduces through one NCCL communicator and ends with the reference's
//     weights (two ranks: bit for bit). Without two GPUs it skips, saying so.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "actors/compute_worker_actor.hpp"
#include "actors/nccl_gang_part.hpp"
#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "gpu/collective_backend.hpp"
#include "gpu/gang_exchange.hpp"
#include "gpu/real_progress.hpp"
#include "messages/message_types.hpp"
#include "tests/integration/node_process.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// Every byte value in turn, so a lost, reordered or sign-mangled byte shows.
gpu::NcclUniqueIdBytes Pattern() {
  gpu::NcclUniqueIdBytes bytes{};
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(255 - 2 * i);
  return bytes;
}

NcclIdMaker FixedId() {
  return [](gpu::NcclUniqueIdBytes* out) {
    *out = Pattern();
    return Status::Ok();
  };
}

TEST(NcclGangJoin, OnceEveryPartJoinedEachGetsTheSameIdAndItsRanks) {
  NcclGangPart gang;
  const int32_t parts = 3;
  EXPECT_TRUE(CollectNcclJoin(gang, NcclGangJoin{5, 2, 4}, caf::actor{}, parts, FixedId()).empty());
  EXPECT_TRUE(CollectNcclJoin(gang, NcclGangJoin{5, 0, 2}, caf::actor{}, parts, FixedId()).empty());
  const AddressedNcclIds ids =
      CollectNcclJoin(gang, NcclGangJoin{5, 1, 1}, caf::actor{}, parts, FixedId());
  ASSERT_EQ(ids.size(), 3u);
  const std::vector<int32_t> first = {0, 2, 3};  // parts of 2, 1 and 4 GPUs, in part order
  for (size_t p = 0; p < ids.size(); ++p) {
    const NcclGangId& id = ids[p].second;
    EXPECT_TRUE(id.why.empty()) << id.why;
    EXPECT_EQ(id.lease_start_s, 5);
    EXPECT_EQ(id.nranks, 7);
    EXPECT_EQ(id.first_rank, first[p]) << "part " << p;
    EXPECT_EQ(id.id.bytes, Pattern());
  }
  EXPECT_TRUE(CollectNcclJoin(gang, NcclGangJoin{5, 1, 1}, caf::actor{}, parts, FixedId()).empty())
      << "a gang answers once";
}

TEST(NcclGangJoin, AnIdThatCannotBeMadeReachesEveryPartAsTheReason) {
  NcclGangPart gang;
  auto no_gpu = [](gpu::NcclUniqueIdBytes*) { return Status::Internal("nccl gang: no GPU"); };
  EXPECT_TRUE(CollectNcclJoin(gang, NcclGangJoin{0, 1, 1}, caf::actor{}, 2, no_gpu).empty());
  const AddressedNcclIds ids =
      CollectNcclJoin(gang, NcclGangJoin{0, 0, 1}, caf::actor{}, 2, no_gpu);
  ASSERT_EQ(ids.size(), 2u);
  for (const auto& [worker, id] : ids) EXPECT_EQ(id.why, "nccl gang: no GPU");
}

TEST(NcclGangJoin, APartThatJoinsTwiceOrIsUnknownEndsTheGangForAll) {
  NcclGangPart gang;
  EXPECT_TRUE(CollectNcclJoin(gang, NcclGangJoin{0, 0, 1}, caf::actor{}, 3, FixedId()).empty());
  const AddressedNcclIds twice =
      CollectNcclJoin(gang, NcclGangJoin{0, 0, 1}, caf::actor{}, 3, FixedId());
  ASSERT_EQ(twice.size(), 2u);  // the part that joined, and the one joining again
  for (const auto& [worker, id] : twice) EXPECT_NE(id.why.find("joined twice"), std::string::npos);
  NcclGangPart other;
  const AddressedNcclIds unknown =
      CollectNcclJoin(other, NcclGangJoin{0, 7, 1}, caf::actor{}, 3, FixedId());
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_FALSE(unknown[0].second.why.empty());
  // A part without GPUs cannot be planned: everyone learns why.
  NcclGangPart empty;
  EXPECT_TRUE(CollectNcclJoin(empty, NcclGangJoin{0, 0, 0}, caf::actor{}, 2, FixedId()).empty());
  const AddressedNcclIds none =
      CollectNcclJoin(empty, NcclGangJoin{0, 1, 1}, caf::actor{}, 2, FixedId());
  ASSERT_EQ(none.size(), 2u);
  for (const auto& [worker, id] : none) EXPECT_NE(id.why.find("GPUs"), std::string::npos);
}

// Part 0's side of the protocol, as the worker runs it, with a fixed id in place of NCCL's.
caf::behavior Collector(caf::stateful_actor<NcclGangPart>* self, int32_t parts) {
  return {[=](const NcclGangJoin& join) {
    auto sender = caf::actor_cast<caf::actor>(self->current_sender());
    for (auto& [worker, id] : CollectNcclJoin(self->state, join, sender, parts, FixedId())) {
      self->send(worker, std::move(id));
    }
  }};
}

std::unique_ptr<caf::actor_system> NetworkedSystem(caf::actor_system_config& cfg) {
  RegisterMessageTypes(cfg);
  cfg.load<caf::io::middleman>();
  return std::make_unique<caf::actor_system>(cfg);
}

// The child process of the test: part 0's collector, published on a loopback port written to
// `fd`; it serves until the parent kills it (at most a minute).
[[noreturn]] void ServeCollector(int fd, int32_t parts) {
  caf::actor_system_config cfg;
  auto system = NetworkedSystem(cfg);
  const caf::actor collector = system->spawn(Collector, parts);
  auto port = system->middleman().publish(collector, 0, "127.0.0.1", true);
  const uint16_t number = port ? *port : 0;
  if (::write(fd, &number, sizeof(number)) != static_cast<ssize_t>(sizeof(number))) ::_exit(1);
  ::close(fd);
  std::this_thread::sleep_for(std::chrono::minutes(1));
  ::_exit(0);
}

// The collector's port, or 0 when the child says nothing within 10 s.
uint16_t ReadPort(int fd) {
  pollfd ready{fd, POLLIN, 0};
  uint16_t port = 0;
  if (::poll(&ready, 1, 10000) != 1 || ::read(fd, &port, sizeof(port)) != sizeof(port)) return 0;
  return port;
}

// Part 0's collector in a child process, the parts here: the joins and the ids cross CAF's
// middleman (two processes, so every message is serialised; two actor systems of one process
// would hand each other their actors directly).
TEST(NcclGangAcrossProcesses, TheUniqueIdCrossesTheMiddlemanIntact) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    ServeCollector(pipe_fds[1], 2);
  }
  ::close(pipe_fds[1]);
  const uint16_t port = ReadPort(pipe_fds[0]);
  ::close(pipe_fds[0]);
  struct Reap {
    pid_t pid;
    ~Reap() {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } reap{child};
  ASSERT_NE(port, 0) << "the collector's process did not publish it";

  caf::actor_system_config cfg;
  auto system = NetworkedSystem(cfg);
  auto remote = system->middleman().remote_actor("127.0.0.1", port);
  ASSERT_TRUE(remote) << system->render(remote.error());
  ASSERT_NE(remote->node(), system->node()) << "the collector is not in another process";
  caf::scoped_actor a{*system}, b{*system};
  a->send(*remote, NcclGangJoin{42.5, 0, 3});
  b->send(*remote, NcclGangJoin{42.5, 1, 2});
  std::vector<NcclGangId> got(2);
  int answered = 0;
  auto receive = [&](caf::scoped_actor& self, size_t part) {
    self->receive([&](const NcclGangId& id) { got[part] = id, ++answered; },
                  caf::after(std::chrono::seconds(30)) >> [] {});
  };
  receive(a, 0);
  receive(b, 1);
  ASSERT_EQ(answered, 2);
  for (const NcclGangId& id : got) {
    EXPECT_TRUE(id.why.empty()) << id.why;
    EXPECT_EQ(id.lease_start_s, 42.5);
    EXPECT_EQ(id.nranks, 5);
    EXPECT_EQ(id.id.bytes, Pattern()) << "the unique id's bytes changed on the way";
  }
  EXPECT_EQ(got[0].first_rank, 0);
  EXPECT_EQ(got[1].first_rank, 3);
}

std::string GangTrace(const std::string& dir) {
  const std::string trace = dir + "/trace.csv";
  WriteFile(trace, "job_id,model,arrival_s,iterations,gpus\n0,res50,0,40,2\n");
  return trace;
}

// Two 1-GPU servers; the job of 2 GPUs is a gang over both.
std::string GangConfig(const std::string& trace, const std::string& backends,
                       const std::string& time_scale = "10000000") {
  return "cluster { servers { count: 2 gpus: 1 cpus: 3 memory_gb: 62.5 } }\n"
         "workload { trace_file: '" +
         trace +
         "' }\n"
         "scheduler { round_s: 10000000 }\n"
         "run { mode: real time_scale: " +
         time_scale +
         " }\n"
         "backends { " +
         backends + " }\n";
}

// Where CUDA cannot run (no GPU, no plugin), an NCCL gang is a bad config: one line, exit 2,
// before anything runs — from validate and from run.
TEST(NcclGangAcrossProcesses, WhereCudaCannotRunAnNcclGangIsABadConfig) {
  std::unique_ptr<gpu::CollectiveBackend> nccl;
  if (gpu::MakeCollectiveBackend("nccl", gpu::LinkModel{}, &nccl).ok()) {
    GTEST_SKIP() << "NCCL answers here: the refusal cannot be seen";
  }
  const std::string dir = FreshDir("nccl-gang-refused");
  const std::string config = dir + "/nccl.textproto";
  WriteFile(config, GangConfig(GangTrace(dir), "compute: 'cuda' collective: 'nccl'"));
  ProcessResult validate = RunTroupe({"validate", config});
  EXPECT_EQ(validate.exit_code, 2);
  EXPECT_NE(validate.err.find("nccl.textproto: backends."), std::string::npos) << validate.err;
  EXPECT_EQ(std::count(validate.err.begin(), validate.err.end(), '\n'), 1) << validate.err;
  ProcessResult run = RunTroupe({"run", config, "--out", dir + "/run", "--quiet"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/run"));
  // nccl with the cpu compute backend is refused on any machine, naming the collective.
  ProcessResult cpu = RunTroupe({"validate", config, "--set", "backends.compute=cpu"});
  EXPECT_EQ(cpu.exit_code, 2);
  EXPECT_NE(cpu.err.find("backends.collective"), std::string::npos) << cpu.err;
}

// The whole protocol between processes, without a GPU: two `troupe node`s and `troupe run` load
// a stand-in plugin (tests/support/fake_nccl_plugin.cpp: CPU compute, a communicator of files
// named by the unique id). The gang's parts must join through part 0 (which made the id), each
// write its rank's buffers under the id's folder, exchange the same number of times, and the job
// must finish.
TEST(NcclGangAcrossProcesses, TheProtocolRunsAGangOverTwoNodeProcesses) {
#ifndef TROUPE_HAVE_CUDA
  GTEST_SKIP() << "this build has no CUDA backends (-DTROUPE_CUDA=OFF, as the sanitizer build): "
                  "troupe refuses backends.compute 'cuda' before any plugin is loaded";
#endif
  const std::string dir = FreshDir("nccl-gang-fake");
  const std::string files = dir + "/fake-nccl";
  ScopedEnv plugin("TROUPE_CUDA_BACKENDS", TROUPE_FAKE_NCCL_PLUGIN);
  ScopedEnv folder("TROUPE_FAKE_NCCL_DIR", files);
  std::vector<std::unique_ptr<NodeProcess>> nodes;
  std::vector<std::string> addresses;
  std::string placements;
  for (int i = 0; i < 2; ++i) {
    const std::string node_dir = dir + "/node-" + std::to_string(i);
    std::filesystem::create_directories(node_dir);
    nodes.push_back(std::make_unique<NodeProcess>(node_dir));
  }
  for (int i = 0; i < 2; ++i) {
    addresses.push_back(nodes[static_cast<size_t>(i)]->WaitForAddress());
    ASSERT_FALSE(addresses.back().empty());
    placements += "placement { node: '" + addresses.back() +
                  "' first_server: " + std::to_string(i) + " last_server: " + std::to_string(i) +
                  " }\n";
  }
  const std::string config = dir + "/gang.textproto";
  WriteFile(config, GangConfig(GangTrace(dir),
                               "compute: 'cuda' collective: 'nccl' scale: 1e-7 width: 64 "
                               "gemms: 2 gradient_mib: 1000000",
                               "250000000") +
                        placements);
  ProcessResult run = RunTroupe({"run", config, "--out", dir + "/run", "--quiet"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(ReadCsv(dir + "/run/jobs.csv").size(), 1u);

  std::map<std::string, std::map<std::string, std::string>> by_node;
  for (auto& row : ReadCsv(dir + "/run/nodes.csv")) by_node[row["node"]] = row;
  ASSERT_EQ(by_node.size(), 2u) << "parts ran outside the two nodes";
  const std::string exchanges = by_node[addresses[0]]["exchanges"];
  EXPECT_GT(std::stoll(exchanges), 0);
  EXPECT_EQ(by_node[addresses[1]]["exchanges"], exchanges);

  // One folder per lease's communicator; in each, both ranks joined and wrote round 0.
  int gangs = 0;
  for (const auto& gang : std::filesystem::directory_iterator(files)) {
    ++gangs;
    for (const char* name : {"join.0", "join.1", "0.0", "0.1"}) {
      EXPECT_TRUE(std::filesystem::exists(gang.path() / name)) << gang.path() << " " << name;
    }
  }
  EXPECT_GE(gangs, 1) << "no communicator was made: the actor all-reduce ran instead";
}

// The cuda variant of the gang test: two `troupe node`s, each lending one GPU (node i: device i),
// one NCCL rank each. Needs two GPUs.
TEST(NcclGangAcrossProcesses, ACudaGangOnTwoNodesEndsWithTheReferenceWeights) {
  std::unique_ptr<gpu::CollectiveBackend> nccl;
  if (Status s = gpu::MakeCollectiveBackend("nccl", gpu::LinkModel{}, &nccl); !s.ok()) {
    GTEST_SKIP() << s.message();
  }
  if (nccl->max_ranks() < 2) GTEST_SKIP() << "one GPU visible: a gang of two ranks needs two";
  nccl.reset();
  const std::string dir = FreshDir("nccl-gang");
  std::vector<std::unique_ptr<NodeProcess>> nodes;
  std::string placements;
  for (int i = 0; i < 2; ++i) {
    const std::string node_dir = dir + "/node-" + std::to_string(i);
    std::filesystem::create_directories(node_dir);
    nodes.push_back(std::make_unique<NodeProcess>(
        node_dir, std::vector<std::string>{"--devices", std::to_string(i)}));
  }
  for (int i = 0; i < 2; ++i) {
    const std::string address = nodes[static_cast<size_t>(i)]->WaitForAddress();
    ASSERT_FALSE(address.empty());
    placements += "placement { node: '" + address + "' first_server: " + std::to_string(i) +
                  " last_server: " + std::to_string(i) + " }\n";
  }
  const std::string text = GangConfig(GangTrace(dir),
                                      "compute: 'cuda' collective: 'nccl' scale: 1e-5 "
                                      "gradient_mib: 10000") +
                           placements;
  config::RunConfig cfg;
  ASSERT_TRUE(ParseConfigText(text, "nccl.textproto", &cfg).ok());
  cfg.mutable_run()->set_out_dir(dir + "/run");
  ASSERT_TRUE(ValidateConfig(cfg, "nccl.textproto").ok());
  RunPlan plan;
  Status planned = PlanRun(cfg, "nccl.textproto", &plan);
  ASSERT_TRUE(planned.ok()) << planned.message();
  auto log = std::make_shared<MeasuredLeaseLog>();
  plan.measured_leases = log;
  RunResult result;
  Status ran = ExecuteRun(std::move(plan), ExecuteOptions{}, &result);
  ASSERT_TRUE(ran.ok()) << ran.message();
  EXPECT_EQ(result.summary.jobs_finished(), 1);

  const int64_t floats = gpu::StepGradientFloats(1e4 * 1024 * 1024, 1e-5);
  const std::vector<MeasuredLease> leases = log->Take();
  ASSERT_FALSE(leases.empty());
  const MeasuredLease& first = leases.front();  // starts from the seeded weights, exchange 0
  ASSERT_EQ(first.parts.size(), 2u);
  std::set<int64_t> pids;
  for (const PartRecord& part : first.parts) pids.insert(part.pid);
  EXPECT_EQ(pids.size(), 2u) << "both parts ran in one process";
  const PartRecord& a = first.parts[0];
  const PartRecord& b = first.parts[1];
  ASSERT_GE(a.exchanges, 1);
  EXPECT_EQ(a.exchanges, b.exchanges);
  // Two ranks: NCCL's sum a + b equals the rank-order reference's bit for bit.
  const uint64_t reference = gpu::WeightsHash(gpu::ReferenceWeights(0, 2, floats, a.exchanges));
  EXPECT_EQ(a.weights_hash, reference);
  EXPECT_EQ(b.weights_hash, reference);
}

}  // namespace
}  // namespace troupe::testing
