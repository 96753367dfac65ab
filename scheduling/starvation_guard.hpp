// StarvationGuard: which unmarked jobs have waited past the starvation bound (policy.hpp,
// MarkStarving), found without visiting the whole queue each round.
//
// Jobs are kept by the start of their wait (WaitingSince); since, at a given time, every job that
// began waiting early enough has waited too long and no other (WaitedTooLong), the due jobs are a
// prefix of that order. The owner tracks every unfinished job that is not marked yet, again
// after it ran (its wait starts anew), and forgets it once it is marked or done.
#pragma once

#include <absl/container/btree_set.h>
#include <absl/container/flat_hash_map.h>

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
  // The ids of the tracked jobs that at now_s have waited longer than the bound, longest first.
  void Due(double now_s, std::vector<int64_t>& ids) const;

 private:
  double starvation_s_;
  absl::btree_set<std::pair<double, int64_t>> by_wait_;  // (waiting since, id)
  absl::flat_hash_map<int64_t, double> since_;
};

}  // namespace troupe::scheduling
