// ActorContext: what every troupe actor needs to send and to read time, in one value: the run's
// clock (virtual seconds, runtime/run_clock.hpp) and its telemetry, which counts every message and
// holds the run's fault network when it has one (telemetry.hpp, fault_network.hpp). An actor
// keeps one in its state and hands it to Tell, TellAt and Ask (counted_send.hpp), so that no send
// of a troupe actor bypasses the counters or the network.
//
// Contract: `telemetry` outlives every actor of the run (the run's ActorRuntime owns it); the
// context is a plain value, copied into each actor at spawn.
#pragma once

#include "runtime/fault_network.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

struct ActorContext {
  RunClock clock;
  Telemetry* telemetry = nullptr;

  // The run's lossy network, or null (no link faults).
  FaultNetwork* network() const { return telemetry->network; }
};

}  // namespace troupe
