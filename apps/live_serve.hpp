// `troupe run --serve [HOST:]PORT [--serve-linger S]`: the live web view of a run (live/).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.hpp"
#include "live/live_process.hpp"

namespace troupe {

// What to listen on: "PORT" (on 127.0.0.1, this machine only) or "HOST:PORT"; port 0 takes a
// free one. Anything else is bad input naming --serve.
Status ParseServeAddress(const std::string& text, std::string* host, uint16_t* port);

// Starts the view (its own process) listening on `address`, to stay up `linger_s` after the run,
// and says where on stderr ("live view: http://HOST:PORT/"). Call before the run starts.
Status StartLiveView(const std::string& address, double linger_s,
                     std::unique_ptr<LiveViewProcess>* view);

// After the run: the view keeps serving its final state for `linger_s`, or until Ctrl-C.
void LingerLiveView(LiveViewProcess& view, double linger_s);

}  // namespace troupe
