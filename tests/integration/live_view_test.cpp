// The live view (`troupe run --serve`), seen from outside: a real browser (headless chromium)
// loads the page while the run goes and, once it has ended, shows the numbers the run reports;
// watching never changes the results; a bad --serve value is one line and exit status 2.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <thread>

#include "tests/integration/run_fixture.hpp"

extern char** environ;

namespace troupe::testing {
namespace {

// chromium's path, or "" when it is not installed.
std::string FindChromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// Starts troupe with stdout and stderr into files; returns its pid.
pid_t SpawnTroupe(const std::vector<std::string>& args, const std::string& out,
                  const std::string& err) {
  std::vector<std::string> argv_strings = {TROUPE_BINARY};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Waits up to `seconds` for `pid` to exit; kills it when it does not. Returns its exit status.
int WaitBounded(pid_t pid, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Waits up to `seconds` for `pattern` in the file; returns its first group, or "".
std::string WaitForLine(const std::string& path, const std::regex& pattern, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::smatch match;
  while (std::chrono::steady_clock::now() < until) {
    const std::string text = ReadFile(path);
    if (std::regex_search(text, match, pattern)) return match[1];
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

// The page's DOM once chromium has run its script (bounded: the page closes its event stream
// once the run has ended, and `timeout` ends a browser that hangs).
std::string DumpDom(const std::string& chromium, const std::string& url) {
  const std::string command = "timeout 120 " + chromium +
                              " --headless --disable-gpu --no-sandbox --no-first-run"
                              " --virtual-time-budget=20000 --dump-dom " +
                              url + " 2>/dev/null";
  std::string dom;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return dom;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) dom.append(buf, n);
  pclose(pipe);
  return dom;
}

std::string Shown(const std::string& dom, const std::string& id) {
  std::smatch match;
  if (!std::regex_search(dom, match, std::regex("id=\"" + id + "\"[^>]*>([^<]*)<"))) return "?";
  return match[1];
}

int64_t SummaryNumber(const std::string& summary, const std::string& key) {
  std::smatch match;
  if (!std::regex_search(summary, match, std::regex("\"" + key + "\": \"?(-?[0-9]+)"))) return -1;
  return std::stoll(match[1]);
}

TEST(LiveView, BrowserShowsTheRunsNumbersAndResultsAreUnchanged) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) {
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it): the live "
                    "view's browser test is skipped";
  }
  const std::string dir = FreshDir("live");
  const std::string config = SourcePath("configs/default.textproto");
  const pid_t pid = SpawnTroupe(
      {"run", config, "--out", dir + "/watched", "--serve", "127.0.0.1:0", "--serve-linger", "120"},
      dir + "/out.txt", dir + "/err.txt");
  ASSERT_GT(pid, 0);
  const std::string port =
      WaitForLine(dir + "/err.txt", std::regex("live view: http://127\\.0\\.0\\.1:([0-9]+)/"), 30);
  if (port.empty()) kill(pid, SIGKILL);
  ASSERT_FALSE(port.empty()) << ReadFile(dir + "/err.txt");

  // Loaded while the run goes (it takes seconds); the page follows it to its end.
  const std::string dom = DumpDom(chromium, "http://127.0.0.1:" + port + "/");
  const bool ended = !WaitForLine(dir + "/out.txt", std::regex("(run directory)"), 60).empty();
  kill(pid, SIGINT);  // ends the linger
  EXPECT_EQ(WaitBounded(pid, 30), 0) << ReadFile(dir + "/err.txt");
  ASSERT_TRUE(ended) << ReadFile(dir + "/err.txt");

  const std::string summary = ReadFile(dir + "/watched/summary.json");
  EXPECT_EQ(Shown(dom, "status"), "finished") << dom.substr(0, 2000);
  EXPECT_EQ(Shown(dom, "jobs-finished"), std::to_string(SummaryNumber(summary, "jobs_finished")));
  EXPECT_EQ(Shown(dom, "rounds"), std::to_string(SummaryNumber(summary, "rounds")));
  EXPECT_EQ(Shown(dom, "jobs-failed"), "0");
  EXPECT_EQ(Shown(dom, "gpu-total"), "128");
  // The heat-map draws one cell per server (16 in the default config).
  const std::regex cell("class=\"server\"");
  const std::ptrdiff_t cells =
      std::distance(std::sregex_iterator(dom.begin(), dom.end(), cell), std::sregex_iterator());
  EXPECT_EQ(cells, 16);
  EXPECT_NE(dom.find("<div class=\"card fabric\" hidden=\"\">"), std::string::npos)
      << "no fabric, no links panel";

  // Watching changes nothing: the same run without --serve writes the same records.
  ProcessResult plain = RunTroupe({"run", config, "--out", dir + "/plain", "--quiet"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  for (const char* file : {"jobs.csv", "rounds.csv"}) {
    EXPECT_EQ(ReadFile(dir + "/watched/" + file), ReadFile(dir + "/plain/" + file)) << file;
  }
}

// A run on a fabric (16 servers of 2 GPUs on 10 Gb/s NICs, so that jobs span servers): the page
// lists the links that carried traffic in the run's last round, busiest first, with the
// utilisation links.csv gives them; watching changes none of its records.
TEST(LiveView, FabricRunShowsItsBusiestLinks) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh)";
  const std::string dir = FreshDir("live-fabric");
  std::vector<std::string> args = {"run",    SourcePath("configs/fabric-128-4to1.textproto"),
                                   "--set",  "cluster.servers[0].gpus=2",
                                   "--set",  "workload.generator.jobs_per_hour=4",
                                   "--set",  "run.measure_first_job=0",
                                   "--set",  "run.measure_last_job=99",
                                   "--set",  "fabric.server_nic_gbps=10",
                                   "--quiet"};
  std::vector<std::string> watched = args;
  watched.insert(watched.end(),
                 {"--out", dir + "/watched", "--serve", "127.0.0.1:0", "--serve-linger", "120"});
  const pid_t pid = SpawnTroupe(watched, dir + "/out.txt", dir + "/err.txt");
  ASSERT_GT(pid, 0);
  const std::string port =
      WaitForLine(dir + "/err.txt", std::regex("live view: http://127\\.0\\.0\\.1:([0-9]+)/"), 30);
  if (port.empty()) kill(pid, SIGKILL);
  ASSERT_FALSE(port.empty()) << ReadFile(dir + "/err.txt");
  const bool ended = !WaitForLine(dir + "/err.txt", std::regex("(the run has ended)"), 60).empty();
  const std::string dom = DumpDom(chromium, "http://127.0.0.1:" + port + "/");
  kill(pid, SIGINT);
  EXPECT_EQ(WaitBounded(pid, 30), 0) << ReadFile(dir + "/err.txt");
  ASSERT_TRUE(ended) << ReadFile(dir + "/err.txt");

  const auto rounds = ReadCsv(dir + "/watched/rounds.csv");
  ASSERT_FALSE(rounds.empty());
  const std::string last = rounds.back().at("round");
  size_t busy = 0;
  double busiest = -1;
  for (const auto& row : ReadCsv(dir + "/watched/links.csv")) {
    if (row.at("round") != last) continue;
    ++busy;
    busiest = std::max(busiest, std::stod(row.at("utilisation")));
  }
  ASSERT_GT(busy, 0u) << "the last round carried no traffic: nothing to show";
  EXPECT_EQ(Shown(dom, "status"), "finished") << dom.substr(0, 2000);
  EXPECT_EQ(Shown(dom, "links-busy"), std::to_string(busy));
  EXPECT_EQ(Shown(dom, "links-total"), "40");  // 16 servers' and 4 racks' links, each way
  std::smatch first;
  ASSERT_TRUE(std::regex_search(
      dom, first, std::regex("<tr class=\"link\"[^>]*><td>([^<]*)</td><td>([^<]*)</td>")))
      << dom.substr(0, 4000);
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.1f%%", 100 * busiest);
  EXPECT_EQ(first[2], shown) << "the busiest link first, " << first[1];
  const std::regex link_row("class=\"link\"");
  const std::ptrdiff_t rows =
      std::distance(std::sregex_iterator(dom.begin(), dom.end(), link_row), std::sregex_iterator());
  EXPECT_EQ(rows, static_cast<std::ptrdiff_t>(std::min<size_t>(busy, 12)));

  args.insert(args.end(), {"--out", dir + "/plain"});
  ProcessResult plain = RunTroupe(args);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  for (const char* file : {"jobs.csv", "rounds.csv", "links.csv"}) {
    EXPECT_EQ(ReadFile(dir + "/watched/" + file), ReadFile(dir + "/plain/" + file)) << file;
  }
}

double SummaryValue(const std::string& summary, const std::string& key) {
  std::smatch match;
  if (!std::regex_search(summary, match, std::regex("\"" + key + "\": ([-0-9.e]+)"))) return -1;
  return std::stod(match[1]);
}

// A parameter-server run: the page shows its steps and each tier's hit rate, as summary.json.
TEST(LiveView, ParameterServerRunShowsStepsAndHitRates) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh)";
  const std::string dir = FreshDir("live-ps");
  const pid_t pid = SpawnTroupe(
      {"run", SourcePath("configs/hps_ctr.textproto"), "--set", "paramserver.batches=20", "--out",
       dir + "/run", "--serve", "0", "--serve-linger", "120"},
      dir + "/out.txt", dir + "/err.txt");
  ASSERT_GT(pid, 0);
  const std::string port =
      WaitForLine(dir + "/err.txt", std::regex("live view: http://127\\.0\\.0\\.1:([0-9]+)/"), 60);
  if (port.empty()) kill(pid, SIGKILL);
  ASSERT_FALSE(port.empty()) << ReadFile(dir + "/err.txt");
  const std::string dom = DumpDom(chromium, "http://127.0.0.1:" + port + "/");
  const bool ended = !WaitForLine(dir + "/out.txt", std::regex("(run directory)"), 120).empty();
  kill(pid, SIGINT);
  EXPECT_EQ(WaitBounded(pid, 30), 0) << ReadFile(dir + "/err.txt");
  ASSERT_TRUE(ended) << ReadFile(dir + "/err.txt");

  const std::string summary = ReadFile(dir + "/run/summary.json");
  EXPECT_EQ(Shown(dom, "status"), "finished") << dom.substr(0, 2000);
  EXPECT_EQ(Shown(dom, "ps-steps"), "20");
  EXPECT_EQ(Shown(dom, "ps-steps-total"), "20");
  char rate[32];
  for (const auto& [id, key] :
       {std::pair{"ps-hbm-hit", "hbm_hit_rate"}, std::pair{"ps-mem-hit", "mem_hit_rate"},
        std::pair{"ps-ssd-hit", "ssd_hit_rate"}}) {
    std::snprintf(rate, sizeof rate, "%.1f%%", 100 * SummaryValue(summary, key));
    EXPECT_EQ(Shown(dom, id), rate) << key;
  }
}

// A sweep: the page lists its runs in the sweep's order, each done with its table's figures.
TEST(LiveView, SweepShowsItsRuns) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh)";
  const std::string dir = FreshDir("live-sweep");
  const pid_t pid =
      SpawnTroupe({"sweep", SourcePath("configs/default.textproto"), "--over",
                   "scheduler.mechanism=tune,proportional", "--set",
                   "workload.generator.num_jobs=40", "--set", "run.measure_first_job=0", "--set",
                   "run.measure_last_job=39", "--quiet", "--serve", "0", "--serve-linger", "120"},
                  dir + "/out.txt", dir + "/err.txt");
  ASSERT_GT(pid, 0);
  const std::string port =
      WaitForLine(dir + "/err.txt", std::regex("live view: http://127\\.0\\.0\\.1:([0-9]+)/"), 60);
  if (port.empty()) kill(pid, SIGKILL);
  ASSERT_FALSE(port.empty()) << ReadFile(dir + "/err.txt");
  const bool ended = !WaitForLine(dir + "/err.txt", std::regex("(the run has ended)"), 120).empty();
  const std::string dom = DumpDom(chromium, "http://127.0.0.1:" + port + "/");
  kill(pid, SIGINT);
  EXPECT_EQ(WaitBounded(pid, 30), 0) << ReadFile(dir + "/err.txt");
  ASSERT_TRUE(ended) << ReadFile(dir + "/err.txt");

  EXPECT_EQ(Shown(dom, "status"), "finished") << dom.substr(0, 2000);
  EXPECT_EQ(Shown(dom, "sweep-done"), "2");
  EXPECT_EQ(Shown(dom, "sweep-total"), "2");
  EXPECT_EQ(Shown(dom, "sweep-failed"), "0");
  const size_t tune = dom.find("<td>mechanism-tune_seed-1</td><td>done</td>");
  const size_t proportional = dom.find("<td>mechanism-proportional_seed-1</td><td>done</td>");
  ASSERT_NE(tune, std::string::npos) << dom.substr(0, 4000);
  ASSERT_NE(proportional, std::string::npos);
  EXPECT_LT(tune, proportional);  // the sweep's order
  EXPECT_NE(dom.find("JCT mean h", tune), std::string::npos);
}

// A slowloris client: it opens a connection to the live view and sends a request's first line,
// then one byte of a header every half second (each well within the server's read timeout), so
// the request is never complete, until destroyed.
class SlowClient {
 public:
  explicit SlowClient(const std::string& port) {
    thread_ = std::thread([this, port = std::stoi(port)] {
      const int fd = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_port = htons(static_cast<uint16_t>(port));
      inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
      if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
        const std::string start = "GET /state HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
        bool open = send(fd, start.data(), start.size(), MSG_NOSIGNAL) > 0;
        for (int tick = 0; open && !stop_.load(); ++tick) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          if (tick % 10 == 9) open = send(fd, "z", 1, MSG_NOSIGNAL) == 1;
        }
      }
      close(fd);
    });
  }
  ~SlowClient() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Requests held open a byte at a time used to keep the server's threads, and the server held the
// run's exit for as long as they kept sending: with --serve-linger 0 the run never exited, and
// Ctrl-C during a linger did not stop it. Each case waits a bounded time for the exit.
TEST(LiveView, SlowClientsDoNotHoldTheRunsExit) {
  const std::string dir = FreshDir("live-slow");
  const std::string config = SourcePath("configs/default.textproto");
  for (const char* linger : {"0", "600"}) {
    SCOPED_TRACE(std::string("--serve-linger ") + linger);
    const std::string run = dir + "/linger" + linger;
    const pid_t pid = SpawnTroupe(
        {"run", config, "--out", run, "--serve", "127.0.0.1:0", "--serve-linger", linger},
        run + ".out", run + ".err");
    ASSERT_GT(pid, 0);
    const std::string port =
        WaitForLine(run + ".err", std::regex("live view: http://127\\.0\\.0\\.1:([0-9]+)/"), 30);
    if (port.empty()) kill(pid, SIGKILL);
    ASSERT_FALSE(port.empty()) << ReadFile(run + ".err");
    std::vector<std::unique_ptr<SlowClient>> slow;
    for (int i = 0; i < 3; ++i) slow.push_back(std::make_unique<SlowClient>(port));
    if (std::string(linger) != "0") {
      // Lingering: Ctrl-C ends it, slow clients or not.
      const bool ended = !WaitForLine(run + ".err", std::regex("(the run has ended)"), 120).empty();
      ASSERT_TRUE(ended) << ReadFile(run + ".err");
      kill(pid, SIGINT);
    }
    EXPECT_EQ(WaitBounded(pid, 120), 0) << ReadFile(run + ".err");
    EXPECT_TRUE(std::filesystem::exists(run + "/summary.json"));
  }
}

TEST(LiveView, BadServeValueIsOneLineAndExitTwo) {
  const std::string dir = FreshDir("live-bad");
  for (const char* value : {"nonsense", "127.0.0.1:70000", ":80", "localhost:", "-1"}) {
    ProcessResult r = RunTroupe({"run", "--out", dir + "/out", "--serve", value});
    EXPECT_EQ(r.exit_code, 2) << value << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("--serve"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out")) << value;
  }
}

TEST(LiveView, OtherKindsOfRunAreRefused) {
  const std::string dir = FreshDir("live-kind");
  ProcessResult r = RunTroupe(
      {"run", SourcePath("configs/oasis.textproto"), "--out", dir + "/out", "--serve", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--serve: the live view shows cluster and parameter-server runs"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));
}

}  // namespace
}  // namespace troupe::testing
