// Seconds, as configs and wire frames give them (a double), to a std::chrono duration that cannot
// overflow. Every place that turns seconds into a timer's duration goes through this. And the
// one reading of the wall clock in seconds, for what runs outside the actors.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>

namespace troupe {

// The longest duration one timer may ask for: clocks count int64 nanoseconds (about 9.2e9 s from
// their epoch), and now + wait must not wrap. Config and trace times are at most 1e9 s
// (config.proto's ranges), so a wait this long only stands for "never within this run".
inline constexpr double kMaxWaitS = 4e9;

// NaN and negative seconds are 0; more than kMaxWaitS is kMaxWaitS.
inline std::chrono::nanoseconds SecondsToNanoseconds(double seconds) {
  if (!(seconds > 0)) return std::chrono::nanoseconds{0};
  if (seconds > kMaxWaitS) seconds = kMaxWaitS;
  return std::chrono::nanoseconds{static_cast<int64_t>(std::llround(seconds * 1e9))};
}

// Seconds on the steady wall clock, from an arbitrary origin: deadlines and elapsed times of what
// runs outside the actors (sockets, the progress line). An actor reads the run's time from its
// actor clock instead (runtime/run_clock.hpp, RunClock::Now).
inline double SteadyWallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace troupe
