// `troupe run --serve [HOST:]PORT [--serve-linger S]`: the live web view of a run (live/).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.hpp"
#include "live/live_view.hpp"

namespace troupe {

// What to listen on: "PORT" (on 127.0.0.1, this machine only) or "HOST:PORT"; port 0 takes a
// free one. Anything else is bad input naming --serve.
Status ParseServeAddress(const std::string& text, std::string* host, uint16_t* port);

// Listens on `address` and says where on stderr ("live view: http://HOST:PORT/").
Status StartLiveView(const std::string& address, std::unique_ptr<LiveView>* view);

// After the run: keeps serving its final state for `seconds`, or until Ctrl-C (SIGINT/SIGTERM).
void LingerLiveView(LiveView& view, double seconds);

}  // namespace troupe
