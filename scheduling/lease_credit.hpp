// What a lease credits a job, in iterations: the arithmetic that the job's own account
// (actors/job_lease_account.hpp) and the round engine's books of a standing lease
// (cluster_scheduler_standing.cpp) share, so that the two always agree on a job's progress.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace troupe::scheduling {

// Iterations done in a lease of `seconds` at `speedup`, as Synergy's simulator counts them
// (same operation order, so the same floating-point result).
inline int64_t IterationsIn(double seconds, double iter_time_s, double speedup) {
  const double per_iteration = iter_time_s / speedup;
  return static_cast<int64_t>(std::floor(seconds / per_iteration));
}

// The same with each iteration's exposed communication over the fabric added to its compute
// (network_s 0: exactly IterationsIn above).
inline int64_t IterationsIn(double seconds, double iter_time_s, double speedup, double network_s) {
  if (network_s == 0) return IterationsIn(seconds, iter_time_s, speedup);
  const double per_iteration = iter_time_s / speedup + network_s;
  return static_cast<int64_t>(std::floor(seconds / per_iteration));
}

// `rounds` rounds of a standing lease, each at the iterations its last report offered
// (JobProgress.standing_iterations), taken from `iterations_left`.
struct StoodCredit {
  int64_t iterations_done = 0;
  int64_t iterations_left = 0;
  bool finished = false;
};
inline StoodCredit CreditStood(int64_t iterations_left, int64_t offered_iterations,
                               int32_t rounds) {
  const int64_t done = std::min(iterations_left, offered_iterations * rounds);
  return StoodCredit{done, iterations_left - done, done == iterations_left};
}

// faults.recovery on_server_loss continue_smaller: the fewest of its `gpus` a job trains on after
// losing servers, min_size_fraction of them rounded up (at least 1).
inline int32_t FewestGpusAfterLoss(double fraction, int32_t gpus) {
  const int32_t fewest = static_cast<int32_t>(std::ceil(fraction * gpus - 1e-9));
  return fewest < 1 ? 1 : fewest;
}

}  // namespace troupe::scheduling
