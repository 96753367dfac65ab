// Sending with the run's counters: every message a troupe actor sends goes through Tell or
// TellAt so that a run can report its message and event counts in both modes.
#pragma once

#include <caf/send.hpp>
#include <utility>

#include "emulation/runtime/run_clock.hpp"
#include "emulation/runtime/telemetry.hpp"

namespace troupe {

template <class Self, class Dest, class... Ts>
void Tell(Self* self, Telemetry* telemetry, const Dest& dest, Ts&&... xs) {
  telemetry->messages.fetch_add(1, std::memory_order_relaxed);
  self->send(dest, std::forward<Ts>(xs)...);
}

// Delivers at virtual time at_s (at once if it has passed).
template <class Self, class Dest, class... Ts>
void TellAt(Self* self, Telemetry* telemetry, const RunClock& clock, const Dest& dest, double at_s,
            Ts&&... xs) {
  telemetry->messages.fetch_add(1, std::memory_order_relaxed);
  telemetry->timed_events.fetch_add(1, std::memory_order_relaxed);
  self->delayed_send(dest, clock.DelayUntil(self->clock().now(), at_s), std::forward<Ts>(xs)...);
}

}  // namespace troupe
