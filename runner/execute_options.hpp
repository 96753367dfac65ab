// How a planned run of any kind is executed: what the command line adds to the plan.
#pragma once

#include <functional>
#include <optional>

#include "config/config.pb.h"
#include "runner/progress.hpp"
#include "runner/run_record.hpp"
#include "runtime/live_feed.hpp"

namespace troupe {

struct Telemetry;

struct ExecuteOptions {
  // The run's progress line on stderr (runner/progress.hpp).
  ProgressMode progress = ProgressMode::kOff;
  // Set by PlannedRun::Execute when the line is shown: a kind's driver calls it about twice a
  // wall second with the run's counters. Empty: no line.
  std::function<void(const Telemetry&)> on_progress;
  // Set with on_progress: a kind's driver calls it with its runtime's counters once they exist,
  // and with null before they go (TelemetryWatch), so that the line reads them itself while one
  // step of the actors takes long (ProgressLine::Watch). Empty: no line.
  std::function<void(const Telemetry*)> watch;
  // Who ran the run, for config.textproto's header (runner/run_record.hpp).
  RunProvenance provenance;
  // RunConfig.agents: a gateway for real training processes (docs/agent.md); real mode only.
  std::optional<config::AgentGateway> agents;
  // RunConfig.external_scheduler: the process that places the rounds
  // (docs/external-scheduler.md).
  std::optional<config::ExternalScheduler> external_scheduler;
  // `--serve`: who receives the run's live snapshots (a few a wall second, and the final one);
  // null: the run keeps no live feed. Cluster runs only.
  LiveSink* live = nullptr;
};

// Hands ExecuteOptions::watch a runtime's counters for as long as it lives: declared after the
// runtime, it takes them back before the runtime goes.
class TelemetryWatch {
 public:
  TelemetryWatch(const ExecuteOptions& options, const Telemetry* telemetry)
      : watch_(options.watch) {
    if (watch_) watch_(telemetry);
  }
  ~TelemetryWatch() {
    if (watch_) watch_(nullptr);
  }
  TelemetryWatch(const TelemetryWatch&) = delete;
  TelemetryWatch& operator=(const TelemetryWatch&) = delete;

 private:
  const std::function<void(const Telemetry*)>& watch_;
};

}  // namespace troupe
