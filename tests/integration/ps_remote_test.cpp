// The parameter server across processes (docs/paramserver.md, "Across processes"): four
// `troupe node` processes on loopback host one shard each (paramserver.hosts); this process runs
// the readers, partitioners and trainers, so every prepare, pull and push crosses CAF's
// middleman. (1) The CTR model trained over four processes is bit-identical to the reference
// taking each step's shares as the nodes do, and so its AUC equals the one-piece reference's
// within 1e-4 relative. (2) One node process is killed with SIGKILL mid-run and started again on
// its port: its shard recovers from its own SSD-PS, the trainers re-send what it had not
// acknowledged, nothing acknowledged is lost (the parameters are still bit-identical) and the
// run completes. Final parameters cross in parts of 1,000 rows. (3) With the trainers, readers and
// partitioners in node processes too (paramserver.trainer_hosts), with or without the shards, the
// model is still bit-identical; a trainer's process killed mid-run stops the run with one line
// naming it. (4) Bad hosts are named before anything connects. Every process is bounded in time and
// killed at the end, whatever failed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "paramserver/reference_trainer.hpp"
#include "runner/ps/ps_run.hpp"
#include "runtime/telemetry.hpp"
#include "tests/integration/ps_fixture.hpp"
#include "tests/integration/run_fixture.hpp"
#include "tests/unit/must.hpp"

extern char** environ;

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;
constexpr int kNodes = 4;

// A `troupe node` child on loopback: `port` 0 picks one (then read from its log).
struct NodeChild {
  pid_t pid = -1;
  std::string log;
};

NodeChild StartNode(const std::string& dir, int index, uint16_t port) {
  NodeChild child;
  static std::atomic<int> started{0};
  const std::string prefix =
      dir + "/node-" + std::to_string(index) + "-" + std::to_string(started.fetch_add(1));
  child.log = prefix + ".out";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, child.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, (prefix + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = {TROUPE_BINARY, "node", "--listen",
                                   "127.0.0.1:" + std::to_string(port)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&child.pid, TROUPE_BINARY, &actions, nullptr, argv.data(), environ) != 0) {
    child.pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  return child;
}

// "127.0.0.1:PORT" once the node says it listens; "" after 10 s.
std::string AddressOf(const NodeChild& child) {
  const std::string prefix = "troupe node listening on ";
  for (int i = 0; i < 200; ++i) {
    std::ifstream in(child.log);
    std::stringstream text;
    text << in.rdbuf();
    const std::string out = text.str();
    const auto at = out.find(prefix);
    const auto eol = out.find('\n', at);
    if (at != std::string::npos && eol != std::string::npos) {
      return out.substr(at + prefix.size(), eol - at - prefix.size());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "";
}

// Whether the node's output (stdout or stderr) says `what`.
bool NodeSaid(const NodeChild& child, const std::string& what) {
  for (const std::string& path : {child.log, child.log.substr(0, child.log.size() - 4) + ".err"}) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(what) != std::string::npos) return true;
  }
  return false;
}

void Stop(NodeChild& child, int signal) {
  if (child.pid <= 0) return;
  kill(child.pid, signal);
  waitpid(child.pid, nullptr, 0);
  child.pid = -1;
}

class PsRemote : public ::testing::Test {
 public:
  void SetUp() override {
    dir_ = FreshDir("ps-remote");
    for (int m = 0; m < kNodes; ++m) {
      nodes_.push_back(StartNode(dir_, m, 0));
      addresses_.push_back(AddressOf(nodes_.back()));
      ASSERT_FALSE(addresses_.back().empty()) << "node " << m << " did not start";
    }
  }
  void TearDown() override {
    for (NodeChild& n : nodes_) Stop(n, SIGKILL);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Where the run's PS nodes live: their shards, their trainers with feeds, both (named in
  // paramserver.hosts and trainer_hosts, or as deployment.host entries with role "ps").
  enum class Places { kShards, kTrainers, kBoth, kDeployment };

  // The small run of ps_fixture in real mode with `places` on the node processes (the rest in
  // this process); `time_scale` stretches its modelled times on the wall clock (smaller: a longer
  // run).
  PsRun Run(double time_scale, const std::function<void(const Telemetry&)>& on_progress = {},
            Places places = Places::kShards) {
    std::string text = kSmallPsConfig;  // its paramserver block, with the shards' places
    std::ostringstream more;
    more << "  ssd_dir: \"" << dir_ << "/ssd\"\n";
    for (const std::string& a : addresses_) {
      if (places == Places::kShards || places == Places::kBoth)
        more << "  hosts: \"" << a << "\"\n";
      if (places == Places::kTrainers || places == Places::kBoth) {
        more << "  trainer_hosts: \"" << a << "\"\n";
      }
    }
    text.insert(text.rfind('}'), more.str());
    if (places == Places::kDeployment) {  // listed last node first: ps_node says which is which
      text += "deployment {\n";
      for (int n = kNodes - 1; n >= 0; --n) {
        text += "  host { name: \"ps-" + std::to_string(n) + "\" address: \"" + addresses_[n] +
                "\" role: \"ps\" ps_node: " + std::to_string(n) + " }\n";
      }
      text += "}\n";
    }
    text += "run { mode: real time_scale: " + std::to_string(time_scale) + " }\n";
    PsRun run;
    config::RunConfig cfg;
    run.status = ParseConfigText(text, "remote.textproto", &cfg);
    if (run.status.ok()) run.status = ValidateConfig(cfg, "remote.textproto");
    if (run.status.ok()) run.status = PlanPsRun(cfg, "remote.textproto", &run.plan);
    if (!run.status.ok()) return run;
    // Each shard's ~10 K final rows cross in parts, as a large model's would.
    run.plan.options.final_rows_per_message = 1000;
    ExecuteOptions options;
    options.on_progress = on_progress;
    run.status = ExecutePsRun(run.plan, options, &run.result);
    return run;
  }

  std::string dir_;
  std::vector<NodeChild> nodes_;
  std::vector<std::string> addresses_;
};

// The reference taking each step's shares as the nodes do, and the one in one piece.
void ExpectLossless(const PsRun& run) {
  const PsOptions& o = run.plan.options;
  paramserver::ReferenceTrainer as_nodes = Must(paramserver::ReferenceTrainer::Create(o.model));
  paramserver::ReferenceTrainer whole = Must(paramserver::ReferenceTrainer::Create(o.model));
  const int64_t global = int64_t{o.nodes} * o.batch_size;
  const std::span<const paramserver::Example> train(*run.plan.train);
  for (int64_t step = 0; step < o.batches; ++step) {
    as_nodes.TrainBatchAsNodes(train.subspan(step * global, global), o.nodes);
    whole.TrainBatch(train.subspan(step * global, global));
  }
  EXPECT_EQ(paramserver::MaxAbsDifference(as_nodes.Parameters(), run.result.parameters), 0.0);
  const double auc = run.result.summary.auc();
  const double reference_auc = whole.Evaluate(run.plan.holdout);
  std::printf("[remote] AUC over %d processes %.6f, reference %.6f (relative %.2e)\n", kNodes, auc,
              reference_auc, std::fabs(auc - reference_auc) / reference_auc);
  EXPECT_LT(std::fabs(auc - reference_auc) / reference_auc, 1e-4);
  EXPECT_TRUE(run.result.summary.replicas_identical());
}

TEST_F(PsRemote, FourProcessesTrainTheReferenceModel) {
  const PsRun run = Run(1);
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(run.result.batches.size(), 40u);
  ExpectLossless(run);
}

TEST_F(PsRemote, KilledNodeProcessRecoversItsShardFromItsSsd) {
  constexpr int kKilled = 2;
  std::atomic<bool> killed{false};
  // Mid-run: once a few steps are done, node 2's process dies as under kill -9 and a new one
  // listens on its port (as a supervisor such as systemd would restart it).
  const uint16_t port = static_cast<uint16_t>(
      std::stoi(addresses_[kKilled].substr(addresses_[kKilled].rfind(':') + 1)));
  auto on_progress = [&](const Telemetry& t) {
    if (killed || t.rounds.load() < 5) return;
    killed = true;
    Stop(nodes_[kKilled], SIGKILL);
    nodes_[kKilled] = StartNode(dir_, kKilled, port);
  };
  // 0.4 ms of modelled time a step at time_scale 0.004: about 0.1 s a step, 4 s a run.
  const PsRun run = Run(0.004, on_progress);
  ASSERT_TRUE(killed) << "the run ended before the kill";
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  const summaries::PsRunSummary& s = run.result.summary;
  EXPECT_EQ(s.crashes(), 1);
  EXPECT_EQ(s.restarts(), 1);
  EXPECT_EQ(s.updates_lost(), 0);
  for (const PsFaultRecord& f : run.result.faults) {
    std::printf("[remote] %s %s: %s\n", f.fault.c_str(), f.event.c_str(), f.detail.c_str());
  }
  EXPECT_EQ(run.result.batches.size(), 40u);
  ExpectLossless(run);
}

// Every stage of every node in a node process of its own (shard, trainer, reader, partitioner):
// this process keeps only the collector. Still bit-identical, and the AUC within 1e-4.
// Named as the deployment's "ps" hosts.
TEST_F(PsRemote, WholeNodesInFourProcessesTrainTheReferenceModel) {
  const PsRun run = Run(1, {}, Places::kDeployment);
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(run.result.batches.size(), 40u);
  ExpectLossless(run);
  for (int n = 0; n < kNodes; ++n) {
    const std::string trainer = "hosting parameter-server trainer " + std::to_string(n) + " ";
    EXPECT_TRUE(NodeSaid(nodes_[n], trainer)) << "node " << n << " hosted no trainer " << n;
    EXPECT_TRUE(NodeSaid(nodes_[n], "hosting parameter-server shard " + std::to_string(n) + " "));
  }
}

// Trainers and feeds in node processes, shards in this one: the other way across the middleman.
TEST_F(PsRemote, TrainersInFourProcessesTrainTheReferenceModel) {
  const PsRun run = Run(1, {}, Places::kTrainers);
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(run.result.batches.size(), 40u);
  ExpectLossless(run);
}

// A trainer's process killed mid-run is not restarted (its dense replica lived only there): the
// run stops at once with one line naming the trainer and its address, instead of waiting for its
// steps forever, or for its node to come back (as a shard alone would, about 10 s).
void ExpectKilledTrainerStopsTheRun(PsRemote* test, PsRemote::Places places) {
  constexpr int kKilled = 1;
  std::atomic<bool> killed{false};
  std::chrono::steady_clock::time_point killed_at;
  auto on_progress = [&](const Telemetry& t) {
    if (killed || t.rounds.load() < 5) return;
    killed = true;
    killed_at = std::chrono::steady_clock::now();
    Stop(test->nodes_[kKilled], SIGKILL);
  };
  const PsRun run = test->Run(0.004, on_progress, places);
  ASSERT_TRUE(killed) << "the run ended before the kill";
  EXPECT_LT(std::chrono::steady_clock::now() - killed_at, std::chrono::seconds(8));
  const std::string& message = run.status.message();
  std::printf("[remote] %s\n", message.c_str());
  EXPECT_EQ(run.status.code(), Status::Code::kIoError) << message;
  // "trainer 1 at A went down (...)", or, when the shard's down came first, "ps:1 at A went down
  // (...) with trainer 1".
  EXPECT_NE(message.find(" at " + test->addresses_[kKilled] + " went down"), std::string::npos)
      << message;
  EXPECT_NE(message.find("trainer 1"), std::string::npos) << message;
  EXPECT_NE(message.find("a trainer's process is not restarted"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST_F(PsRemote, KilledTrainerProcessStopsTheRunNamingIt) {
  ExpectKilledTrainerStopsTheRun(this, Places::kTrainers);
}

TEST_F(PsRemote, KilledWholeNodeProcessStopsTheRunNamingItsTrainer) {
  ExpectKilledTrainerStopsTheRun(this, Places::kBoth);
}

// Bad input is named before anything connects: the count of hosts, their form, the mode.
TEST(PsRemoteConfig, HostsAreCheckedBeforeTheRun) {
  auto plan = [](const std::string& hosts, const std::string& mode) {
    std::string text = kSmallPsConfig;
    text.insert(text.rfind('}'), hosts);
    text += "run { mode: " + mode + " }\n";
    config::RunConfig cfg;
    PsPlan out;
    Status s = ParseConfigText(text, "hosts.textproto", &cfg);
    if (s.ok()) s = ValidateConfig(cfg, "hosts.textproto");
    if (s.ok()) s = PlanPsRun(cfg, "hosts.textproto", &out);
    return s;
  };
  const std::string three = R"(hosts: "127.0.0.1:1" hosts: "127.0.0.1:2" hosts: "127.0.0.1:3")";
  const Status count = plan(three, "real");
  EXPECT_EQ(count.code(), Status::Code::kInvalidInput);
  EXPECT_NE(count.message().find("paramserver.hosts: names 3 nodes; paramserver.nodes is 4"),
            std::string::npos)
      << count.message();
  const Status form = plan(three + R"( hosts: "127.0.0.1")", "real");
  EXPECT_NE(form.message().find("paramserver.hosts[3]: must be \"host:port\""), std::string::npos)
      << form.message();
  const Status mode = plan(three + R"( hosts: "127.0.0.1:4")", "emulated");
  EXPECT_NE(mode.message().find("paramserver.hosts: needs run.mode: real"), std::string::npos)
      << mode.message();
  EXPECT_TRUE(plan(three + R"( hosts: "127.0.0.1:4")", "real").ok());
  const std::string trainers =
      R"(trainer_hosts: "127.0.0.1:1" trainer_hosts: "127.0.0.1:2" trainer_hosts: "127.0.0.1:3")";
  const Status trainer_count = plan(trainers, "real");
  EXPECT_NE(trainer_count.message().find(
                "paramserver.trainer_hosts: names 3 nodes; paramserver.nodes is 4"),
            std::string::npos)
      << trainer_count.message();
  const Status trainer_form = plan(trainers + R"( trainer_hosts: "nowhere")", "real");
  EXPECT_NE(trainer_form.message().find("paramserver.trainer_hosts[3]: must be \"host:port\""),
            std::string::npos)
      << trainer_form.message();
  const Status trainer_mode = plan(trainers + R"( trainer_hosts: "127.0.0.1:4")", "emulated");
  EXPECT_NE(trainer_mode.message().find("paramserver.trainer_hosts: needs run.mode: real"),
            std::string::npos)
      << trainer_mode.message();
  EXPECT_TRUE(plan(trainers + R"( trainer_hosts: "127.0.0.1:4")", "real").ok());
}

// deployment.host entries with role "ps" place whole PS nodes (shard and trainer with its feed),
// once each, in any order; anything else is named before anything connects.
TEST(PsRemoteConfig, PsHostsOfTheDeploymentPlaceWholeNodes) {
  auto plan = [](const std::string& hosts, PsPlan* out) {
    std::string text =
        std::string(kSmallPsConfig) + "run { mode: real }\ndeployment {" + hosts + "}\n";
    config::RunConfig cfg;
    Status s = ParseConfigText(text, "ps-hosts.textproto", &cfg);
    if (s.ok()) s = ValidateConfig(cfg, "ps-hosts.textproto");
    if (s.ok()) s = PlanPsRun(cfg, "ps-hosts.textproto", out);
    return s;
  };
  auto host = [](int n, int port, const std::string& role = "ps") {
    return " host { name: \"h" + std::to_string(port) +
           "\" address: \"127.0.0.1:" + std::to_string(port) + "\" role: \"" + role +
           "\" ps_node: " + std::to_string(n) + " }";
  };
  PsPlan ok;
  ASSERT_TRUE(plan(host(3, 4) + host(1, 2) + host(0, 1) + host(2, 3), &ok).ok());
  const std::vector<std::string> by_node = {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3",
                                            "127.0.0.1:4"};
  EXPECT_EQ(ok.hosts, by_node);
  EXPECT_EQ(ok.trainer_hosts, by_node);
  EXPECT_TRUE(ok.options.durable_updates);
  auto message = [&](const std::string& hosts) {
    PsPlan out;
    return plan(hosts, &out).message();
  };
  const std::string three = host(0, 1) + host(1, 2) + host(2, 3);
  EXPECT_NE(message(three).find("deployment.host: no \"ps\" host runs parameter-server node 3"),
            std::string::npos)
      << message(three);
  EXPECT_NE(message(three + host(1, 4))
                .find("deployment.host[3].ps_node: parameter-server node 1 "
                      "already runs on 127.0.0.1:2"),
            std::string::npos)
      << message(three + host(1, 4));
  EXPECT_NE(message(three + host(4, 4)).find("deployment.host[3].ps_node: must name"),
            std::string::npos);
  EXPECT_NE(message(three + host(3, 4, "worker")).find("deployment.host[3].role: a paramserver"),
            std::string::npos);
}

}  // namespace
}  // namespace troupe::testing
