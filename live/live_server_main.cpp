// troupe-live: the live view's server process, started by `troupe run --serve` (live_process.hpp)
// with one end of a socket pair as file descriptor 3. Not meant to be run by hand:
//
//   troupe-live FLAG HOST PORT LINGER_S
//
// It listens on HOST:PORT (0: a free port) and answers on fd 3 with the port, or "!" and the
// one-line error (naming FLAG); then it serves each snapshot (JSON) that arrives, and once the
// run closes its end, the last one for LINGER_S seconds or until SIGINT/SIGTERM. Then it exits
// within a couple of seconds, however many connections are still open.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "base/parse.hpp"
#include "live/live_frames.hpp"
#include "live/live_view.hpp"

namespace {

constexpr int kRunSocket = 3;
std::atomic<bool> g_stop{false};
void StopServing(int) { g_stop.store(true); }

}  // namespace

int main(int argc, char** argv) {
  using namespace troupe;
  uint64_t port = 0;
  if (argc != 5 || !ParseWholeNumber(argv[3], 65535, &port)) return 2;
  const std::string flag = argv[1], host = argv[2];
  const double linger_s = std::stod(argv[4]);
  LiveView view;
  const Status s = view.Start(host, static_cast<uint16_t>(port), flag);
  const std::string answer = s.ok() ? std::to_string(view.port()) : "!" + s.message();
  if (!live_frames::WriteFrame(kRunSocket, answer) || !s.ok()) return 2;
  std::string json;
  for (int64_t version = 1; live_frames::ReadFrame(kRunSocket, &json); ++version) {
    view.Publish(json, version);
  }
  struct sigaction action = {};
  action.sa_handler = StopServing;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(linger_s);
  while (!g_stop.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // A client holding a request open (slowloris) keeps an HTTP thread past Stop's grace: end the
  // process, which drops its connection, rather than let it hold the run's exit.
  if (!view.Stop()) std::_Exit(0);
  return 0;
}
