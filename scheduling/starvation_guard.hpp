// StarvationGuard: which unmarked jobs have waited past the starvation bound (policy.hpp,
// MarkStarving), found without visiting the whole queue each round.
//
// Jobs are kept by the start of their wait (WaitingSince); since, at a given time, every job that
// began waiting early enough has waited too long and no other (WaitedTooLong), the due jobs are
// the first ones of that order. The owner tracks every unfinished job that is not marked yet
// (tracking it again after it ran is allowed and changes nothing: see below), and forgets it once
// it is marked or done.
//
// The order is a binary min-heap whose outdated entries (a job tracked back to an earlier start,
// or forgotten) stay in it until they reach the top or the heap is rebuilt. A job that ran keeps
// its entry: its wait only starts later, so the entry's start is a lower bound, and Due, which
// asks the owner for each job's start as it reaches the top, files it again at the real one. A
// job that runs round after round thus costs one hash probe a round and one push per starvation
// bound, where a sorted tree paid an erase and an insert every round.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/functional/function_ref.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

class StarvationGuard {
 public:
  // starvation_s <= 0: the guard is off and tracks nothing.
  explicit StarvationGuard(double starvation_s = 0) : starvation_s_(starvation_s) {}

  bool enabled() const { return starvation_s_ > 0; }
  void Track(const SchedJob& job);
  void Forget(int64_t id);
  // The ids of the tracked jobs that at now_s have waited longer than the bound, longest first
  // (by start of wait, then id). They stay tracked until forgotten. `waiting_since(id)` is the
  // job's WaitingSince now; for a job the owner no longer has, anything not later than the start
  // it was tracked at (it is then listed as that start says).
  void Due(double now_s, absl::FunctionRef<double(int64_t)> waiting_since,
           std::vector<int64_t>& ids);

 private:
  using Watch = std::pair<double, int64_t>;  // (waiting since, id)
  bool Current(const Watch& w) const;
  void Push(const Watch& w);
  void Pop();
  void Rebuild();

  double starvation_s_;
  std::vector<Watch> heap_;  // min-heap by (since, id); outdated entries are skipped
  absl::flat_hash_map<int64_t, double> since_;
  std::vector<Watch> due_;  // scratch of Due
};

}  // namespace troupe::scheduling
