// A `troupe node` frees what a run held once the run goes away, however it goes: the run's process
// killed by SIGTERM or by SIGKILL, or its connection to the node lost while the run lives on. Each
// test starts one node lending devices 4 and 5 (`--devices 4,5`), a real-compute run (cpu
// backend) whose one 2-GPU server the node hosts and whose job would run for minutes, takes the
// run away once the node hosts its server, and then runs a second, short run of a 2-GPU server on
// the same node: it must get both devices and finish its job. Before the fix the node kept the
// devices lent to the first run's server until the node was restarted, and the second run stopped
// at once: "0 of this node's devices (--devices) are free". Every wait is bounded and waits for an
// event (a log line, an exit), not for time.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/integration/node_process.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// A TCP relay on loopback between a run and a node. Cut() ends every connection through it at
// once, as a lost network would: the node sees the run's connection end while the run lives on.
class Relay {
 public:
  explicit Relay(uint16_t target) : target_(target) {
    listen_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(at);
    if (bind(listen_, reinterpret_cast<sockaddr*>(&at), size) != 0 || listen(listen_, 4) != 0 ||
        getsockname(listen_, reinterpret_cast<sockaddr*>(&at), &size) != 0) {
      return;
    }
    port_ = ntohs(at.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~Relay() {
    Cut();
    if (acceptor_.joinable()) acceptor_.join();
    for (std::thread& t : threads_) t.join();
    for (int fd : fds_) close(fd);
    close(listen_);
  }
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // "127.0.0.1:PORT", or "" when the relay could not listen.
  std::string address() const { return port_ ? "127.0.0.1:" + std::to_string(port_) : ""; }

  void Cut() {
    std::lock_guard<std::mutex> lock(mu_);
    cut_ = true;
    shutdown(listen_, SHUT_RDWR);
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);
  }

 private:
  void Accept() {
    for (;;) {
      const int from = accept(listen_, nullptr, nullptr);
      if (from < 0) return;
      const int to = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in node{};
      node.sin_family = AF_INET;
      node.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      node.sin_port = htons(target_);
      connect(to, reinterpret_cast<sockaddr*>(&node), sizeof(node));
      std::lock_guard<std::mutex> lock(mu_);
      fds_.push_back(from);
      fds_.push_back(to);
      if (cut_) {
        shutdown(from, SHUT_RDWR);
        shutdown(to, SHUT_RDWR);
      }
      threads_.emplace_back([from, to] { Pump(from, to); });
      threads_.emplace_back([from, to] { Pump(to, from); });
    }
  }
  // Copies bytes from one socket to the other until either ends, then ends both.
  static void Pump(int from, int to) {
    char buffer[65536];
    for (;;) {
      const ssize_t got = read(from, buffer, sizeof(buffer));
      if (got <= 0) break;
      ssize_t sent = 0;
      while (sent < got) {
        // MSG_NOSIGNAL: the far end may close first (Cut); that is an error here, not SIGPIPE.
        const ssize_t n = send(to, buffer + sent, static_cast<size_t>(got - sent), MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += n;
      }
      if (sent < got) break;
    }
    shutdown(from, SHUT_RDWR);
    shutdown(to, SHUT_RDWR);
  }

  uint16_t target_ = 0;
  uint16_t port_ = 0;
  int listen_ = -1;
  std::mutex mu_;
  bool cut_ = false;
  std::vector<int> fds_;
  std::thread acceptor_;
  std::vector<std::thread> threads_;  // the pumps, added by acceptor_ under mu_
};

// Polls file `path` until it holds `count` lines with `needle`; false after 120 s.
bool WaitForLines(const std::string& path, const std::string& needle, int count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    const std::string text = ReadFile(path);
    int found = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++found;
    }
    if (found >= count) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

class NodeRelease : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("node-release");
    node_ = std::make_unique<NodeProcess>(dir_, std::vector<std::string>{"--devices", "4,5"});
    address_ = node_->WaitForAddress();
    ASSERT_FALSE(address_.empty()) << ReadFile(dir_ + "/node.err");
  }

  void TearDown() override {
    if (run_ > 0) {
      kill(run_, SIGKILL);
      WaitForExit(run_);
    }
  }

  uint16_t NodePort() const {
    return static_cast<uint16_t>(std::stoi(address_.substr(address_.rfind(':') + 1)));
  }

  // A run of one 2-GPU server placed at `node` with one 2-GPU job of `iterations`; its config.
  std::string WriteRun(const std::string& name, const std::string& node, int64_t iterations) {
    WriteFile(dir_ + "/" + name + ".csv", "job_id,model,arrival_s,iterations,gpus\n0,res18,0," +
                                              std::to_string(iterations) + ",2\n");
    const std::string config = dir_ + "/" + name + ".textproto";
    WriteFile(config,
              "cluster { servers { count: 1 gpus: 2 cpus: 6 memory_gb: 125 } }\n"
              "workload { trace_file: '" +
                  dir_ + "/" + name +
                  ".csv' }\n"
                  "scheduler { round_s: 10000000 }\n"
                  "run { mode: real time_scale: 250000000 }\n"
                  // A V100's reference, given: the long job lasts minutes on any host.
                  "backends { compute: 'cpu' reference_flops_per_s: 14e12 scale: 1e-7 width: 64 "
                  "gemms: 2 }\n"
                  "placement { node: '" +
                  node + "' first_server: 0 last_server: 0 }\n");
    return config;
  }

  // Starts a run at `node` whose job lasts minutes, and returns once the node hosts its server
  // (the node's devices 4 and 5 are lent to it).
  void StartLongRun(const std::string& node) {
    const std::string config = WriteRun("long", node, 400000000);
    run_ = SpawnWithLogs({TROUPE_BINARY, "run", config, "--out", dir_ + "/long", "--quiet"},
                         dir_ + "/long.out", dir_ + "/long.err");
    ASSERT_GT(run_, 0);
    ASSERT_TRUE(WaitForLines(dir_ + "/node.out", "node: hosting server server-0", 1))
        << ReadFile(dir_ + "/long.err");
  }

  // Kills the long run with `signal` and reaps it.
  void KillLongRun(int signal) {
    kill(run_, signal);
    EXPECT_EQ(WaitForExit(run_), 128 + signal);
    run_ = -1;
  }

  // A short run on the node, started at once: it gets both devices and finishes its job.
  void ExpectTheNextRunGetsTheDevices() {
    const std::string config = WriteRun("next", address_, 40);
    ProcessResult next = RunTroupe({"run", config, "--out", dir_ + "/next", "--quiet"});
    EXPECT_EQ(next.exit_code, 0) << next.err;
    EXPECT_EQ(next.err.find("devices (--devices) are free"), std::string::npos) << next.err;
    if (next.exit_code != 0) return;
    auto jobs = ReadCsv(dir_ + "/next/jobs.csv");
    ASSERT_EQ(jobs.size(), 1u);
    ASSERT_FALSE(jobs[0]["end_s"].empty());
    EXPECT_GE(std::stod(jobs[0]["end_s"]), 0);
    // The node says why it took the devices back, and which.
    EXPECT_NE(ReadFile(dir_ + "/node.out")
                  .find("node: a run went away (exit_reason(remote_link_unreachable)): stopped "
                        "its 1 servers; devices [4,5] are free again"),
              std::string::npos)
        << ReadFile(dir_ + "/node.out");
  }

  std::string dir_;
  std::unique_ptr<NodeProcess> node_;
  std::string address_;
  int run_ = -1;
};

TEST_F(NodeRelease, ARunStoppedBySigtermFreesTheNodesDevices) {
  StartLongRun(address_);
  KillLongRun(SIGTERM);
  ExpectTheNextRunGetsTheDevices();
}

TEST_F(NodeRelease, ARunKilledBySigkillFreesTheNodesDevices) {
  StartLongRun(address_);
  KillLongRun(SIGKILL);
  ExpectTheNextRunGetsTheDevices();
}

// The run reaches the node through a relay, which is cut: the node frees the devices while the
// run's process still lives, and the next run gets them before the first one is stopped.
TEST_F(NodeRelease, ARunWhoseConnectionIsLostFreesTheNodesDevices) {
  Relay relay(NodePort());
  ASSERT_FALSE(relay.address().empty());
  StartLongRun(relay.address());
  relay.Cut();
  ASSERT_TRUE(WaitForLines(dir_ + "/node.out", "node: a run went away", 1))
      << ReadFile(dir_ + "/node.out");
  ExpectTheNextRunGetsTheDevices();
}

}  // namespace
}  // namespace troupe::testing
