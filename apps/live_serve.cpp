#include "apps/live_serve.hpp"

#include <cstdio>

#include "base/parse.hpp"
#include "base/status_macros.hpp"

namespace troupe {

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

Status StartLiveView(const std::string& address, double linger_s,
                     std::unique_ptr<LiveViewProcess>* view) {
  std::string host;
  uint16_t port = 0;
  RETURN_IF_ERROR(ParseServeAddress(address, &host, &port));
  auto started = std::make_unique<LiveViewProcess>();
  RETURN_IF_ERROR(started->Start(host, port, "--serve", linger_s));
  std::fprintf(stderr, "live view: http://%s:%u/\n", host.c_str(),
               static_cast<unsigned>(started->port()));
  std::fflush(stderr);
  *view = std::move(started);
  return Status::Ok();
}

void LingerLiveView(LiveViewProcess& view, double linger_s) {
  if (linger_s > 0) {
    std::fprintf(stderr,
                 "live view: the run has ended; serving its final state for %g s (Ctrl-C to "
                 "stop)\n",
                 linger_s);
    std::fflush(stderr);
  }
  view.Finish();
}

}  // namespace troupe
