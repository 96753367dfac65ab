// Sending with the run's counters: every message a troupe actor sends goes through Tell or
// TellAt so that a run can report its message and event counts in both modes, and so that the
// run's fault network (fault_network.hpp), when it has one, may drop, delay or duplicate it.
#pragma once

#include <caf/actor.hpp>
#include <caf/send.hpp>
#include <utility>

#include "emulation/runtime/fault_network.hpp"
#include "emulation/runtime/run_clock.hpp"
#include "emulation/runtime/telemetry.hpp"

namespace troupe {
namespace send_detail {

inline caf::actor_id IdOf(const caf::actor& dest) { return dest ? dest.id() : 0; }
template <class T>
caf::actor_id IdOf(const T* dest) {
  return dest->id();
}

// Sends `xs` after `delay` through the fault network. Returns false if the network left the
// message to the caller (no network, or nothing to do but a plain send).
template <class Self, class Dest, class... Ts>
bool SendThroughNetwork(Self* self, Telemetry* telemetry, const Dest& dest, caf::timespan delay,
                        Ts&&... xs) {
  FaultNetwork* network = telemetry->network;
  if (network == nullptr) return false;
  const NetworkRoute route = network->Decide(self->id(), IdOf(dest), self->clock().now());
  if (route.copies == 1 && route.delay_s == 0) return false;
  if (route.copies == 0) return true;
  const caf::timespan late = delay + SecondsToTimespan(route.delay_s / network->clock().time_scale);
  telemetry->timed_events.fetch_add(route.copies, std::memory_order_relaxed);
  for (int i = 1; i < route.copies; ++i) self->delayed_send(dest, late, xs...);
  self->delayed_send(dest, late, std::forward<Ts>(xs)...);
  return true;
}

}  // namespace send_detail

template <class Self, class Dest, class... Ts>
void Tell(Self* self, Telemetry* telemetry, const Dest& dest, Ts&&... xs) {
  telemetry->messages.fetch_add(1, std::memory_order_relaxed);
  if (send_detail::SendThroughNetwork(self, telemetry, dest, caf::timespan{0}, xs...)) return;
  self->send(dest, std::forward<Ts>(xs)...);
}

// Delivers at virtual time at_s (at once if it has passed).
template <class Self, class Dest, class... Ts>
void TellAt(Self* self, Telemetry* telemetry, const RunClock& clock, const Dest& dest, double at_s,
            Ts&&... xs) {
  telemetry->messages.fetch_add(1, std::memory_order_relaxed);
  telemetry->timed_events.fetch_add(1, std::memory_order_relaxed);
  const caf::timespan delay = clock.DelayUntil(self->clock().now(), at_s);
  if (send_detail::SendThroughNetwork(self, telemetry, dest, delay, xs...)) return;
  self->delayed_send(dest, delay, std::forward<Ts>(xs)...);
}

}  // namespace troupe
