#include "apps/live_serve.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "base/parse.hpp"

namespace troupe {
namespace {

std::atomic<bool> g_stop_lingering{false};

void StopLingering(int) { g_stop_lingering.store(true); }

}  // namespace

Status ParseServeAddress(const std::string& text, std::string* host, uint16_t* port) {
  if (text.find(':') == std::string::npos) {
    uint64_t number = 0;
    if (!ParseWholeNumber(text, 65535, &number)) {
      return Status::InvalidInput("--serve " + text +
                                  ": expected PORT or HOST:PORT, the port a whole number in "
                                  "[0, 65535]");
    }
    *host = "127.0.0.1";
    *port = static_cast<uint16_t>(number);
    return Status::Ok();
  }
  if (!SplitHostPort(text, 0, host, port)) {
    return Status::InvalidInput("--serve " + text +
                                ": expected PORT or HOST:PORT, the port a whole number in "
                                "[0, 65535]");
  }
  return Status::Ok();
}

Status StartLiveView(const std::string& address, std::unique_ptr<LiveView>* view) {
  std::string host;
  uint16_t port = 0;
  if (Status s = ParseServeAddress(address, &host, &port); !s.ok()) return s;
  auto started = std::make_unique<LiveView>();
  if (Status s = started->Start(host, port, "--serve"); !s.ok()) return s;
  std::fprintf(stderr, "live view: http://%s:%u/\n", host.c_str(),
               static_cast<unsigned>(started->port()));
  std::fflush(stderr);
  *view = std::move(started);
  return Status::Ok();
}

void LingerLiveView(LiveView& view, double seconds) {
  if (seconds > 0) {
    std::fprintf(stderr,
                 "live view: the run has ended; serving its final state for %g s "
                 "(Ctrl-C to stop)\n",
                 seconds);
    std::fflush(stderr);
    struct sigaction action = {};
    action.sa_handler = StopLingering;
    sigemptyset(&action.sa_mask);
    struct sigaction old_int = {}, old_term = {};
    sigaction(SIGINT, &action, &old_int);
    sigaction(SIGTERM, &action, &old_term);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!g_stop_lingering.load() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
  view.Stop();
}

}  // namespace troupe
