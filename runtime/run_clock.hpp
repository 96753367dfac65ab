// RunClock: turns an actor clock's time points into a run's virtual seconds and back.
//
// Actors read time only through this and their own `self->clock()`, and wait only with delayed
// messages. In emulated mode the actor clock is CAF's test clock (virtual, jumps to the next
// timer) and time_scale is 1; in real mode it is the wall clock and time_scale compresses
// emulated durations (3600: an hour of job time per wall second). The same actor code runs on
// both.
#pragma once

#include <caf/actor_clock.hpp>
#include <caf/timespan.hpp>
#include <chrono>
#include <cmath>

#include "base/seconds.hpp"

namespace troupe {

// Seconds on the actor clock as a timespan, saturating (base/seconds.hpp): no value can overflow
// the int64 nanosecond count.
inline caf::timespan SecondsToTimespan(double seconds) { return SecondsToNanoseconds(seconds); }

struct RunClock {
  caf::actor_clock::time_point epoch{};
  double time_scale = 1;

  // Virtual seconds since the start of the run.
  double Seconds(caf::actor_clock::time_point now) const {
    return std::chrono::duration<double>(now - epoch).count() * time_scale;
  }

  // Virtual seconds now, read on `self`'s actor clock: how an actor reads the run's time.
  template <class Actor>
  double Now(Actor* self) const {
    return Seconds(self->clock().now());
  }

  // How long to wait, on the actor clock, until virtual time at_s (zero if it has passed).
  caf::timespan DelayUntil(caf::actor_clock::time_point now, double at_s) const {
    return SecondsToTimespan((at_s - Seconds(now)) / time_scale);
  }
};

}  // namespace troupe
