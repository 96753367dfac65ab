// How a planned run of any kind is executed: what the command line adds to the plan.
#pragma once

#include <optional>

#include "messages/config.pb.h"
#include "runtime/live_feed.hpp"

namespace troupe {

struct ExecuteOptions {
  bool progress_line = false;  // a one-line progress report on stderr, twice a second
  // RunConfig.agents: a gateway for real training processes (docs/agent.md); real mode only.
  std::optional<config::AgentGateway> agents;
  // `--serve`: who receives the run's live snapshots (a few a wall second, and the final one);
  // null: the run keeps no live feed. Cluster runs only.
  LiveSink* live = nullptr;
};

}  // namespace troupe
