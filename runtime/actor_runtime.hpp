// ActorRuntime: one CAF actor system set up for a run's mode, and the loop that drives it.
//
//   emulated  EmulatedCoordinator (runtime/emulated_clock.hpp): CAF's test coordinator with a
//             virtual clock of troupe's own; one thread, deterministic. Drive() runs every ready
//             message, then jumps the virtual clock to the next timer, until the run is done.
//   real      CAF's work-stealing scheduler on the wall clock; Drive() waits for the run.
// Everything else — actors, messages, timers — is identical in both modes. The middleman is
// loaded when actors will cross processes.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <functional>
#include <memory>

#include "runtime/deployment_credentials.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

struct RuntimeOptions {
  bool emulated = true;
  double time_scale = 1;  // real mode only; emulated mode always runs at 1
  int threads = 0;        // real mode; 0 = CAF's default
  bool middleman = false;
  // With the middleman: seconds between the heartbeats this process sends to the others (0: none,
  // CAF's default), and the silence after which a peer is taken as dead: its connection is closed
  // and its actors' down messages arrive (0: never). A run with faults sends every heartbeat_s and
  // judges its nodes after three; `troupe node` sends often and judges nobody (a run may be idle).
  double heartbeat_s = 0;
  double peer_timeout_s = 0;
  // With the middleman: set, every connection in or out is mutual TLS with these credentials
  // (runtime/deployment_credentials.hpp); unset, plaintext (loopback only, checked by callers).
  DeploymentCredentials credentials;
};

class ActorRuntime {
 public:
  explicit ActorRuntime(const RuntimeOptions& options);
  ~ActorRuntime();
  ActorRuntime(const ActorRuntime&) = delete;
  ActorRuntime& operator=(const ActorRuntime&) = delete;

  caf::actor_system& system() { return *system_; }
  const RunClock& clock() const { return clock_; }
  Telemetry* telemetry() { return &telemetry_; }
  bool emulated() const { return options_.emulated; }

  // Runs the actors until telemetry().done is set. `on_progress` is called about twice a wall
  // second. Returns false when the emulation went quiet first (no message, no timer left).
  bool Drive(const std::function<void()>& on_progress);
  // Emulated mode: lets actors that were told to exit finish (runs until nothing is left).
  void Drain();
  // Wall-clock seconds since the runtime started.
  double WallSeconds() const;

 private:
  RuntimeOptions options_;
  std::unique_ptr<caf::actor_system_config> config_;
  std::unique_ptr<caf::actor_system> system_;
  RunClock clock_;
  Telemetry telemetry_;
  std::chrono::steady_clock::time_point wall_start_;
};

}  // namespace troupe
