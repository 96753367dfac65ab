// What a lease credits a job, in iterations: the arithmetic that the job's own account
// (actors/job_lease_account.hpp) and the round engine's books of a standing lease
// (cluster_scheduler_standing.cpp) share, so that the two always agree on a job's progress —
// under faults.recovery too, where a round's training is what its checkpoints and restarts leave
// of it (messages/lease_span.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "messages/lease_span.hpp"
#include "messages/records.hpp"

namespace troupe::scheduling {

// Seconds of one iteration at `speedup`, with its exposed communication over the fabric added
// (network_s 0: the compute alone, as Synergy's simulator counts it).
inline double IterationSeconds(double iter_time_s, double speedup, double network_s) {
  const double per_iteration = iter_time_s / speedup;
  return network_s == 0 ? per_iteration : per_iteration + network_s;
}

// Iterations done in `seconds` of training at iteration_s seconds each.
inline int64_t IterationsAt(double seconds, double iteration_s) {
  return static_cast<int64_t>(std::floor(seconds / iteration_s));
}

// Iterations done in a lease of `seconds` at `speedup`, as Synergy's simulator counts them
// (same operation order, so the same floating-point result).
inline int64_t IterationsIn(double seconds, double iter_time_s, double speedup) {
  return IterationsAt(seconds, IterationSeconds(iter_time_s, speedup, 0));
}

// The same with each iteration's exposed communication over the fabric added to its compute
// (network_s 0: exactly IterationsIn above).
inline int64_t IterationsIn(double seconds, double iter_time_s, double speedup, double network_s) {
  return IterationsAt(seconds, IterationSeconds(iter_time_s, speedup, network_s));
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

// faults.recovery: what a lease that ran `span` saved, into *cadence (set to span.after first)
// and *checkpoints. Under every_lease (costs.interval_s <= 0) the lease's end is a checkpoint,
// free: `left_after` iterations are saved. Otherwise the span's last checkpoint saved what its
// training before the cut made, `iterations_at(span.cut_train_s)` of the `left_before`.
template <class IterationsAt>
void SaveAfterSpan(const CheckpointCosts& costs, const LeaseSpan& span, int64_t left_before,
                   int64_t left_after, IterationsAt iterations_at, CheckpointCadence* cadence,
                   int32_t* checkpoints) {
  *cadence = span.after;
  if (costs.interval_s <= 0) {
    cadence->saved_iterations_left = left_after;
    cadence->unsaved_train_s = 0;
    ++*checkpoints;
  } else if (span.cut_train_s >= 0) {
    cadence->saved_iterations_left =
        left_before - std::min(left_before, iterations_at(span.cut_train_s));
  }
}

// faults.recovery: one round a standing lease stood, as a lease of lease_s on all of the job's
// GPUs commits it (JobActor's RunLease): the round first pays restarts and checkpoint writes
// from `cadence` (RunSpan), trains the rest at iteration_s seconds an iteration, and its
// checkpoints save what was trained before they were cut. *cadence is advanced.
struct StoodRound {
  int64_t iterations_done = 0;
  int64_t iterations_left = 0;
  bool finished = false;
  LeaseSpan span;
  JobRecovery costs;  // what the round's report says (JobProgress.recovery)
};
inline StoodRound CreditStoodRound(const CheckpointCosts& costs, CheckpointCadence* cadence,
                                   int64_t iterations_left, double iteration_s, double lease_s) {
  StoodRound r;
  r.span = RunSpan(costs, *cadence, lease_s);
  r.iterations_done = std::min(IterationsAt(r.span.train_s, iteration_s), iterations_left);
  r.iterations_left = iterations_left - r.iterations_done;
  r.finished = r.iterations_left == 0;
  r.costs = JobRecovery{.checkpoints = r.span.checkpoints,
                        .checkpoint_s = r.span.checkpoint_s,
                        .restart_s = r.span.restart_s};
  SaveAfterSpan(
      costs, r.span, iterations_left, r.iterations_left,
      [iteration_s](double s) { return IterationsAt(s, iteration_s); }, cadence,
      &r.costs.checkpoints);
  return r;
}

// faults.recovery on_server_loss continue_smaller: the fewest of its `gpus` a job trains on after
// losing servers, min_size_fraction of them rounded up (at least 1).
inline int32_t FewestGpusAfterLoss(double fraction, int32_t gpus) {
  const int32_t fewest = static_cast<int32_t>(std::ceil(fraction * gpus - 1e-9));
  return fewest < 1 ? 1 : fewest;
}

}  // namespace troupe::scheduling
