// A deployment's processes authenticate each other: a `troupe node --credentials DIR` speaks
// mutual TLS (CAF's OpenSSL module) and serves only peers whose certificate its deployment's CA
// signed. A run without credentials, or with a certificate of another deployment, is refused at
// the handshake (no server is spawned for it) and the node goes on serving the deployment's runs.
// Bad credential files are one line naming the file, exit status 2, nothing written. Every child
// process here is bounded in time and killed if it overruns.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "runtime/deployment_credentials.hpp"
#include "tests/integration/run_fixture.hpp"

extern char** environ;

namespace troupe::testing {
namespace {

constexpr char kCluster[] =
    "cluster { servers { count: 4 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
    "workload { generator { jobs_per_hour: 30 num_jobs: 12 multi_gpu: true } }\n"
    "run { mode: real time_scale: 300000 seed: 5 }\n";
constexpr auto kChildLimit = std::chrono::seconds(60);

// A troupe child with stdout and stderr in files; SIGKILLed if still running when destroyed.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::string& prefix)
      : out_(prefix + ".out"), err_(prefix + ".err") {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> strings = {TROUPE_BINARY};
    strings.insert(strings.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, TROUPE_BINARY, &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Child() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  // The exit status once the child exits within `limit`; -1 if it is still running then.
  int Wait(std::chrono::seconds limit = kChildLimit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!exited_ && pid_ > 0) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      } else if (std::chrono::steady_clock::now() > deadline) {
        return -1;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    return code_;
  }
  bool Running() { return Wait(std::chrono::seconds(0)) == -1; }
  std::string Out() const { return ReadFile(out_); }
  std::string Err() const { return ReadFile(err_); }
  // The address from "troupe node listening on ADDR", "" if not printed within 10 s.
  std::string WaitForAddress() {
    const std::string prefix = "troupe node listening on ";
    for (int i = 0; i < 500; ++i) {
      const std::string out = Out();
      const auto at = out.find(prefix);
      const auto eol = out.find('\n', at);
      if (at != std::string::npos && eol != std::string::npos) {
        return out.substr(at + prefix.size(), eol - at - prefix.size());
      }
      if (!Running()) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "";
  }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = -1;
};

// Connects to host:port, sends `bytes`, ends its side, and waits (up to 10 s) for the peer to
// have read them and closed the connection.
void SendRawBytes(const std::string& address, const std::string& bytes) {
  const auto colon = address.rfind(':');
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  ASSERT_EQ(inet_pton(AF_INET, address.substr(0, colon).c_str(), &peer.sin_addr), 1) << address;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&peer), sizeof(peer)), 0) << address;
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  shutdown(fd, SHUT_WR);
  // Whatever the peer answers (an alert), then its end of the connection (0, or a reset).
  pollfd readable{fd, POLLIN, 0};
  char answer[256];
  bool closed = false;
  while (!closed && poll(&readable, 1, 10000) == 1) closed = read(fd, answer, sizeof answer) <= 0;
  EXPECT_TRUE(closed) << "the peer kept the connection open 10 s after the bytes";
  close(fd);
}

// Credentials made by the shipped script: deployment A (a node and a run) and deployment B (a run
// whose certificate another CA signed).
class DeploymentTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(FreshDir("tls"));
    const std::string script = SourcePath("scripts/make-deployment-credentials.sh");
    const std::pair<const char*, const char*> deployments[] = {{"A", "node run"}, {"B", "run"}};
    for (const auto& [deployment, names] : deployments) {
      const std::string command =
          "timeout 30 " + script + " " + *dir_ + "/" + deployment + " " + names + " >/dev/null";
      ASSERT_EQ(std::system(command.c_str()), 0) << command;
    }
  }
  static void TearDownTestSuite() { delete dir_; }

  std::string Path(const std::string& relative) const { return *dir_ + "/" + relative; }

  // Writes a config placing servers 2-3 on `node`, with `credentials` ("" for none).
  std::string PlacedConfig(const std::string& name, const std::string& node,
                           const std::string& credentials) const {
    std::string text = std::string(kCluster) + "placement { node: \"" + node +
                       "\" first_server: 2 last_server: 3 }\n";
    if (!credentials.empty()) text += "deployment { credentials_dir: \"" + credentials + "\" }\n";
    WriteFile(Path(name + ".textproto"), text);
    return Path(name + ".textproto");
  }

  static std::string* dir_;
};
std::string* DeploymentTls::dir_ = nullptr;

TEST_F(DeploymentTls, NodeRefusesPeersOutsideTheDeploymentAndKeepsServing) {
  Child node({"node", "--listen", "127.0.0.1:0", "--credentials", Path("A/node")}, Path("node"));
  const std::string address = node.WaitForAddress();
  ASSERT_FALSE(address.empty()) << node.Err();

  // Plaintext, and a certificate of deployment B: both refused at the handshake.
  for (const std::string& creds : {std::string(""), Path("B/run")}) {
    const std::string name = creds.empty() ? "plain" : "other-ca";
    Child run({"run", PlacedConfig(name, address, creds), "--out", Path(name), "--quiet"},
              Path(name));
    ASSERT_EQ(run.Wait(), 1) << name << ": " << run.Err();
    EXPECT_NE(run.Err().find("refused during the handshake"), std::string::npos) << run.Err();
    EXPECT_FALSE(std::filesystem::exists(Path(name))) << name;
    ASSERT_TRUE(node.Running()) << "the node died on a refused peer: " << node.Err();
  }
  // Bytes that are no TLS hello at all.
  SendRawBytes(address, "GET / HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(node.Running()) << node.Err();
  const std::string before = node.Out() + node.Err();
  EXPECT_EQ(before.find("hosting server"), std::string::npos) << "a refused peer got servers";

  // The deployment's own run: its servers 2-3 live in the node, and every job finishes.
  Child run({"run", PlacedConfig("good", address, Path("A/run")), "--out", Path("good"), "--quiet"},
            Path("good"));
  ASSERT_EQ(run.Wait(), 0) << run.Err();
  const auto rows = ReadCsv(Path("good/jobs.csv"));
  ASSERT_EQ(rows.size(), 12u);
  for (const auto& row : rows) EXPECT_GE(std::stod(row.at("jct_s")), 0) << row.at("job_id");
  const std::string log = node.Out() + node.Err();
  EXPECT_NE(log.find("hosting server server-2"), std::string::npos) << log;
  EXPECT_TRUE(node.Running());
}

TEST_F(DeploymentTls, RunWithCredentialsIsRefusedByAPlaintextNode) {
  Child node({"node", "--listen", "127.0.0.1:0"}, Path("plain-node"));
  const std::string address = node.WaitForAddress();
  ASSERT_FALSE(address.empty()) << node.Err();
  Child run({"run", PlacedConfig("tls-to-plain", address, Path("A/run")), "--out",
             Path("tls-to-plain"), "--quiet"},
            Path("tls-to-plain"));
  ASSERT_EQ(run.Wait(), 1) << run.Err();
  // Refused at the handshake, or (when the plaintext node drops the TLS hello first) unable to
  // connect: either way the run fails and the node was given nothing.
  const std::string err = run.Err();
  EXPECT_TRUE(err.find("refused during the handshake") != std::string::npos ||
              err.find("cannot connect") != std::string::npos)
      << err;
  EXPECT_TRUE(node.Running());
  EXPECT_EQ((node.Out() + node.Err()).find("hosting server"), std::string::npos);
}

// One line on stderr naming `needle`, exit status 2.
void ExpectBadInput(Child& child, const std::string& needle) {
  ASSERT_EQ(child.Wait(), 2) << child.Err();
  const std::string err = child.Err();
  EXPECT_NE(err.find(needle), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

TEST_F(DeploymentTls, BadCredentialsAreOneLineAndExitTwo) {
  {
    Child node({"node", "--listen", "127.0.0.1:0", "--credentials", Path("missing")},
               Path("bad-node"));
    ExpectBadInput(node, Path("missing/ca.pem"));
  }
  {
    Child node({"node", "--listen", "0.0.0.0:0"}, Path("open-node"));
    ExpectBadInput(node, "--credentials");
  }
  // cert.pem of deployment A beside deployment B's CA, and a key of another certificate.
  std::filesystem::create_directories(Path("mixed"));
  std::filesystem::copy_file(Path("B/run/ca.pem"), Path("mixed/ca.pem"));
  std::filesystem::copy_file(Path("A/run/cert.pem"), Path("mixed/cert.pem"));
  std::filesystem::copy_file(Path("A/run/key.pem"), Path("mixed/key.pem"));
  {
    Child node({"node", "--listen", "127.0.0.1:0", "--credentials", Path("mixed")},
               Path("mixed-node"));
    ExpectBadInput(node, Path("mixed/cert.pem") + ": not accepted by " + Path("mixed/ca.pem"));
  }
  std::filesystem::copy_file(Path("A/node/key.pem"), Path("mixed/key.pem"),
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(Path("A/run/ca.pem"), Path("mixed/ca.pem"),
                             std::filesystem::copy_options::overwrite_existing);
  {
    Child run({"run", PlacedConfig("mixed-run", "127.0.0.1:1", Path("mixed")), "--out",
               Path("mixed-run")},
              Path("mixed-run"));
    ExpectBadInput(run, "deployment.credentials_dir: " + Path("mixed/key.pem"));
    EXPECT_FALSE(std::filesystem::exists(Path("mixed-run")));
  }
  {
    Child run({"run", PlacedConfig("missing-run", "127.0.0.1:1", Path("nowhere")), "--out",
               Path("missing-run")},
              Path("missing-run"));
    ExpectBadInput(run, Path("nowhere/ca.pem"));
    EXPECT_FALSE(std::filesystem::exists(Path("missing-run")));
  }
  {
    Child run(
        {"run", PlacedConfig("remote-plain", "10.1.2.3:7000", ""), "--out", Path("remote-plain")},
        Path("remote-plain"));
    ExpectBadInput(run, "deployment.credentials_dir");
  }
}

TEST(LoopbackHost, OnlyAddressesThatStayOnThisMachine) {
  for (const char* host : {"localhost", "127.0.0.1", "127.3.2.1", "::1", "[::1]"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "10.0.0.1", "128.0.0.1", "::", "example.org", ""}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

}  // namespace
}  // namespace troupe::testing
