// A real multi-process run that loses a node (issue 6): three `troupe node` processes on loopback
// host two servers each (`placement`), `troupe run` (real mode, 60 s rounds at time_scale 1200,
// so 50 ms a round and about 5 s a run) schedules 12 jobs on them, and the node hosting servers 2
// and 3 dies mid-run: killed by the test with SIGKILL, or by a `crash node:HOST:PORT` fault (the
// node calls _Exit(137)). Heartbeats are on with or without a `faults` block. Asserts that the run
// exits 0, that jobs.csv has every job finished exactly once (faults/run_invariants.hpp on the
// run directory read back), that the scheduler was told of exactly the dead node's servers by
// down messages, and that no round starting a round after it learned leases them. Without a
// faults block the trace has a 13th job of 20 GPUs arriving late: once the node is gone only 16
// survive, and it fails with the reason instead of waiting forever. Every child process is killed
// in TearDown, whatever failed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "faults/run_invariants.hpp"
#include "tests/integration/run_fixture.hpp"

extern char** environ;

namespace troupe::testing {
namespace {

constexpr double kRoundS = 60;
constexpr int kJobs = 12;
constexpr int kServers = 6;  // two per node
constexpr int kKilledNode = 1;
constexpr int32_t kKilledFirst = 2, kKilledLast = 3;  // the servers of node kKilledNode

// 12 jobs of 1-8 GPUs (32 GPUs asked of 24) arriving over the first 15 minutes, about 4,000 s of
// emulated time on all servers.
constexpr char kTrace[] =
    "job_id,model,arrival_s,duration_s,gpus\n"
    "0,res18,0,1800,2\n1,res18,0,2400,4\n2,res18,0,1200,1\n3,res18,60,3000,2\n"
    "4,res18,60,1800,4\n5,res18,120,2400,1\n6,res18,120,1200,8\n7,res18,180,3600,2\n"
    "8,res18,240,1800,1\n9,res18,300,2400,4\n10,res18,600,1200,2\n11,res18,900,3000,1\n";

// Arrives after the node died (some 1,800 s in, see WaitForJobsDone); needs more GPUs than the
// two other nodes have.
constexpr int kBigJob = 12;
constexpr double kBigJobArrivalS = 3000;
constexpr char kBigJobLine[] = "12,res18,3000,600,20\n";

// A child process running the troupe binary, stdout and stderr to files.
struct Child {
  pid_t pid = -1;
  std::string out, err;
  int status = 0;  // waitpid's status once reaped
  bool reaped = false;
};

Child Spawn(const std::vector<std::string>& args, const std::string& prefix) {
  Child child;
  child.out = prefix + ".out";
  child.err = prefix + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, child.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, child.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<std::string> strings = {TROUPE_BINARY};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (posix_spawn(&child.pid, TROUPE_BINARY, &actions, nullptr, argv.data(), environ) != 0) {
    child.pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  return child;
}

// Waits up to `timeout` for the child to exit; true once it has (reaped).
bool WaitExit(Child& child, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!child.reaped && child.pid > 0) {
    if (waitpid(child.pid, &child.status, WNOHANG) == child.pid) {
      child.reaped = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return child.reaped;
}

// Polls `text()` until it holds `count` matches of `needle`; false after `timeout`.
template <class Text>
bool WaitForText(Text text, const std::string& needle, int count, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const std::string now = text();
    int found = 0;
    for (size_t at = now.find(needle); at != std::string::npos; at = now.find(needle, at + 1)) {
      ++found;
    }
    if (found >= count) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// What the scheduler logged about dead servers: server -> the emulated second it learned.
std::map<int32_t, double> ServersDown(const std::string& log, int* lines) {
  static const std::regex down(R"(scheduler: server (\d+) is down \(([^)]*\)?)\) at (\d+) s)");
  std::map<int32_t, double> out;
  *lines = 0;
  for (std::sregex_iterator it(log.begin(), log.end(), down), end; it != end; ++it) {
    ++*lines;
    out[std::stoi((*it)[1])] = std::stod((*it)[3]);
  }
  return out;
}

std::string SummaryString(const std::string& summary_json, const std::string& key) {
  const std::regex field("\"" + key + "\": \"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(summary_json, m, field) ? m[1].str() : "";
}

class NodeKill : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshDir("node-kill"); }

  void TearDown() override {
    for (Child* child : Children()) {
      if (child->pid > 0 && !child->reaped) {
        kill(child->pid, SIGKILL);
        waitpid(child->pid, &child->status, 0);
        child->reaped = true;
      }
    }
  }

  std::vector<Child*> Children() {
    std::vector<Child*> all = {&run_};
    for (Child& node : nodes_) all.push_back(&node);
    return all;
  }

  // Starts the three nodes; their "HOST:PORT" in addresses_.
  void StartNodes() {
    for (int i = 0; i < 3; ++i) {
      nodes_.push_back(
          Spawn({"node", "--listen", "127.0.0.1:0"}, dir_ + "/node" + std::to_string(i)));
      ASSERT_GT(nodes_.back().pid, 0) << "cannot start troupe node";
    }
    const std::string prefix = "troupe node listening on ";
    for (Child& node : nodes_) {
      ASSERT_TRUE(
          WaitForText([&] { return ReadFile(node.out); }, prefix, 1, std::chrono::seconds(20)))
          << "troupe node did not start: " << ReadFile(node.err);
      const std::string out = ReadFile(node.out);
      const size_t at = out.find(prefix) + prefix.size();
      addresses_.push_back(out.substr(at, out.find('\n', at) - at));
    }
  }

  // Writes the trace (kTrace and `more_jobs`) and the config, with `faults` inside the faults block
  // (no block at all when `faults_block` is false), and starts the run.
  void StartRun(const std::string& faults, bool faults_block = true,
                const std::string& more_jobs = "") {
    big_job_ = more_jobs.find(kBigJobLine) != std::string::npos;
    jobs_ = kJobs + static_cast<int>(std::count(more_jobs.begin(), more_jobs.end(), '\n'));
    WriteFile(dir_ + "/trace.csv", std::string(kTrace) + more_jobs);
    std::ostringstream cfg;
    cfg << "cluster { servers { name: \"s\" count: " << kServers
        << " gpus: 4 cpus: 16 memory_gb: 200 } }\n"
        << "workload { trace_file: \"" << dir_ << "/trace.csv\" }\n"
        << "scheduler { round_s: " << kRoundS << " }\n"
        << "run { mode: real time_scale: 1200 seed: 1 lease_log: true }\n";
    for (int i = 0; i < 3; ++i) {
      cfg << "placement { node: \"" << addresses_[i] << "\" first_server: " << 2 * i
          << " last_server: " << 2 * i + 1 << " }\n";
    }
    if (faults_block) cfg << "faults { heartbeat_s: 0.2 " << faults << " }\n";
    WriteFile(dir_ + "/run.textproto", cfg.str());
    // With its progress line (on stderr): WaitForJobsDone reads it.
    run_ = Spawn({"run", dir_ + "/run.textproto", "--out", dir_ + "/out"}, dir_ + "/run");
    ASSERT_GT(run_.pid, 0) << "cannot start troupe run";
  }

  // Blocks until every node hosts its servers: the run has connected and its rounds begin.
  void WaitForServersHosted() {
    auto hosted = [&] {
      std::string all;
      for (Child& node : nodes_) all += ReadFile(node.out) + ReadFile(node.err);
      return all;
    };
    ASSERT_TRUE(WaitForText(hosted, "node: hosting server", kServers, std::chrono::seconds(30)))
        << "the run did not place its servers: " << ReadFile(run_.out) << ReadFile(run_.err);
  }

  // Blocks until the run's progress line says that two of its jobs have finished (its first line
  // off a terminal, a tenth of the jobs done: some 1,800 emulated seconds in, after every node's
  // servers have held leases and well before the run ends).
  void WaitForJobsDone() {
    ASSERT_TRUE(WaitForText([&] { return ReadFile(run_.err); }, "[troupe] run: ", 1,
                            std::chrono::seconds(120)))
        << "the run finished no job: " << ReadFile(run_.out) << ReadFile(run_.err);
  }

  // Waits for the run and checks everything the run directory and its log must show.
  void ExpectRunSurvivedTheNode() {
    // Generous: the run takes about 5 s; a loaded machine only stretches its rounds.
    ASSERT_TRUE(WaitExit(run_, std::chrono::seconds(60)))
        << "troupe run hung: " << ReadFile(run_.out) << ReadFile(run_.err);
    const std::string log = ReadFile(run_.out) + ReadFile(run_.err);
    ASSERT_TRUE(WIFEXITED(run_.status) && WEXITSTATUS(run_.status) == 0) << log;

    // The scheduler learned of the dead node's servers, each once, and only of them.
    int down_lines = 0;
    const std::map<int32_t, double> down = ServersDown(log, &down_lines);
    std::set<int32_t> down_servers;
    double learned_s = 0;
    for (const auto& [server, at_s] : down) {
      down_servers.insert(server);
      learned_s = std::max(learned_s, at_s);
    }
    EXPECT_EQ(down_servers, (std::set<int32_t>{kKilledFirst, kKilledLast})) << log;
    EXPECT_EQ(down_lines, kKilledLast - kKilledFirst + 1) << log;
    EXPECT_NE(log.find("remote_link_unreachable"), std::string::npos) << log;

    // Every job is recorded once and finished (not failed): read the run directory back.
    const std::string out = dir_ + "/out";
    std::vector<JobRecord> jobs;
    for (auto& row : ReadCsv(out + "/jobs.csv")) {
      JobRecord j;
      j.job_id = std::stoll(row["job_id"]);
      j.gpus = std::stoi(row["gpus"]);
      j.end_s = std::stod(row["end_s"]);
      j.wasted_gpu_s = std::stod(row["wasted_gpu_s"]);
      j.failure = row["failure"];
      jobs.push_back(j);
    }
    std::vector<RoundRecord> rounds;
    for (auto& row : ReadCsv(out + "/rounds.csv")) {
      RoundRecord r;
      r.round = std::stoll(row["round"]);
      r.start_s = std::stod(row["start_s"]);
      rounds.push_back(r);
    }
    std::vector<LeaseRecord> leases;
    for (auto& row : ReadCsv(out + "/leases.csv")) {
      LeaseRecord l;
      l.round = std::stoll(row["round"]);
      l.job_id = std::stoll(row["job_id"]);
      l.server = std::stoi(row["server"]);
      std::stringstream gpus(row["gpu_ids"]);
      for (std::string g; std::getline(gpus, g, ';');) l.gpu_ids.push_back(std::stoi(g));
      l.cpus = std::stod(row["cpus"]);
      l.memory_gb = std::stod(row["memory_gb"]);
      leases.push_back(l);
    }
    const int all_jobs = jobs_;
    ASSERT_EQ(jobs.size(), static_cast<size_t>(all_jobs)) << ReadFile(out + "/jobs.csv");
    int big_job_failed = 0;
    for (const JobRecord& j : jobs) {
      if (j.job_id == kBigJob && !j.failure.empty()) {
        EXPECT_EQ(j.failure, "needs 20 GPUs; 16 survive (2 of 6 servers lost for good)");
        ++big_job_failed;
        continue;
      }
      EXPECT_GE(j.end_s, 0) << "job " << j.job_id << " did not finish";
      EXPECT_EQ(j.failure, "") << "job " << j.job_id;
    }
    // Arriving after the loss, it never fits; before it (a slow machine), it may have finished.
    if (big_job_ && learned_s < kBigJobArrivalS) {
      EXPECT_EQ(big_job_failed, 1) << log;
    }

    // The invariants, with the node's servers dead from one round after the scheduler learned.
    FaultEvent dead;
    dead.kind = FaultKind::kCrash;
    dead.target.kind = EndpointKind::kServer;
    dead.target.first = kKilledFirst;
    dead.target.last = kKilledLast;
    dead.at_s = learned_s + kRoundS;
    FaultPlan plan;
    plan.events.push_back(dead);
    InvariantInput in;
    in.jobs = &jobs;
    in.rounds = &rounds;
    in.leases = &leases;
    in.servers.assign(kServers, ServerCapacity{4, 16, 200});
    in.faults = &plan;
    in.jobs_expected = kJobs;
    in.end_reason = SummaryString(ReadFile(out + "/summary.json"), "end_reason");
    EXPECT_EQ(in.end_reason, "all jobs finished");
    const InvariantReport report = CheckRunInvariants(in);
    for (const std::string& v : report.violations) ADD_FAILURE() << v;
    EXPECT_EQ(report.jobs_finished, all_jobs - big_job_failed);
    EXPECT_EQ(report.jobs_lost, 0);

    // The node really died mid-run: its servers had leases before, the run went on after.
    std::map<int64_t, double> start_of;
    for (const RoundRecord& r : rounds) start_of[r.round] = r.start_s;
    int leased_before = 0, rounds_after = 0;
    for (const LeaseRecord& l : leases) {
      leased_before +=
          l.server >= kKilledFirst && l.server <= kKilledLast && start_of[l.round] < learned_s;
    }
    for (const RoundRecord& r : rounds) rounds_after += r.start_s > learned_s + kRoundS;
    EXPECT_GT(leased_before, 0) << "the killed node never ran a job";
    EXPECT_GT(rounds_after, 0) << "the run ended before the node died";
  }

  std::string dir_;
  bool big_job_ = false;  // the trace has kBigJobLine
  int jobs_ = kJobs;
  std::vector<Child> nodes_;
  std::vector<std::string> addresses_;
  Child run_;
};

TEST_F(NodeKill, SigkillOfANodeMidRunLosesNoJob) {
  ASSERT_NO_FATAL_FAILURE(StartNodes());
  ASSERT_NO_FATAL_FAILURE(StartRun(""));
  ASSERT_NO_FATAL_FAILURE(WaitForServersHosted());
  ASSERT_NO_FATAL_FAILURE(WaitForJobsDone());
  Child& victim = nodes_[kKilledNode];
  ASSERT_EQ(kill(victim.pid, SIGKILL), 0);
  ASSERT_TRUE(WaitExit(victim, std::chrono::seconds(10)));
  ASSERT_TRUE(WIFSIGNALED(victim.status) && WTERMSIG(victim.status) == SIGKILL);
  ExpectRunSurvivedTheNode();
  // The other nodes are unharmed: they hosted and outlived the run.
  for (int i = 0; i < 3; ++i) {
    if (i == kKilledNode) continue;
    EXPECT_FALSE(WaitExit(nodes_[i], std::chrono::seconds(0))) << "node " << i << " exited";
  }
}

// No faults block: heartbeats are on all the same, the dead node's servers are lost for good, and
// the job that no longer fits fails instead of holding the run open forever.
TEST_F(NodeKill, SigkillWithoutAFaultsBlockEndsTheRun) {
  ASSERT_NO_FATAL_FAILURE(StartNodes());
  ASSERT_NO_FATAL_FAILURE(StartRun("", /*faults_block=*/false, kBigJobLine));
  ASSERT_NO_FATAL_FAILURE(WaitForServersHosted());
  ASSERT_NO_FATAL_FAILURE(WaitForJobsDone());
  Child& victim = nodes_[kKilledNode];
  ASSERT_EQ(kill(victim.pid, SIGKILL), 0);
  ASSERT_TRUE(WaitExit(victim, std::chrono::seconds(10)));
  ExpectRunSurvivedTheNode();
}

// A hung node (SIGSTOP) keeps its connection open: only the heartbeats, on by default for remote
// servers, find it dead (3 x 1 s of silence); the jobs waiting for its grants then report, and the
// run goes on without it. A long job (9,000 s, 7.5 s of wall time) keeps the run going past the
// detection.
TEST_F(NodeKill, HungNodeWithoutAFaultsBlockIsFoundByHeartbeats) {
  ASSERT_NO_FATAL_FAILURE(StartNodes());
  ASSERT_NO_FATAL_FAILURE(
      StartRun("", /*faults_block=*/false, std::string(kBigJobLine) + "13,res18,0,9000,1\n"));
  ASSERT_NO_FATAL_FAILURE(WaitForServersHosted());
  ASSERT_NO_FATAL_FAILURE(WaitForJobsDone());
  ASSERT_EQ(kill(nodes_[kKilledNode].pid, SIGSTOP), 0);  // TearDown's SIGKILL ends it
  ExpectRunSurvivedTheNode();
}

TEST_F(NodeKill, CrashFaultMakesTheNodeExitAndLosesNoJob) {
  ASSERT_NO_FATAL_FAILURE(StartNodes());
  ASSERT_NO_FATAL_FAILURE(StartRun("fault { kind: crash target: \"node:" + addresses_[kKilledNode] +
                                   "\" at_s: 1200 }"));
  ExpectRunSurvivedTheNode();
  Child& victim = nodes_[kKilledNode];
  ASSERT_TRUE(WaitExit(victim, std::chrono::seconds(10))) << "the crash fault left the node up";
  EXPECT_TRUE(WIFEXITED(victim.status) && WEXITSTATUS(victim.status) == 137);
  std::vector<std::map<std::string, std::string>> faults = ReadCsv(dir_ + "/out/faults.csv");
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0]["fault"], "crash node:" + addresses_[kKilledNode] + " @1200s");
  EXPECT_EQ(faults[0]["effect"], "the node process exits at once");
}

}  // namespace
}  // namespace troupe::testing
