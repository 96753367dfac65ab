// InjectedArrivals: the jobs of registered agents, waiting in the workload actor for the
// scheduler's next ArrivalsRequest, and how many more the run still expects.
//
// While agents are still expected the workload is not exhausted: Next() answers the request's
// own time ("one may arrive any moment"), so the scheduler keeps pulling each round instead of
// ending the run. Past the deadline (run clock) the workload stops waiting; a job injected after
// that is refused (the caller stops its actor).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "messages/cluster_messages.hpp"

namespace troupe {

class InjectedArrivals {
 public:
  void Expect(int64_t count, double deadline_s) {
    expected_ = arrived_ + count;
    deadline_s_ = deadline_s;
  }
  bool expecting() const { return arrived_ < expected_; }

  // False when no more agent jobs are expected: the caller stops `job`'s actor.
  bool Add(ArrivedJob job) {
    if (!expecting()) return false;
    ++arrived_;
    pending_.push_back(std::move(job));
    return true;
  }

  // Moves the jobs that arrived by until_s into `out`, in arrival order.
  void TakeUntil(double until_s, std::vector<ArrivedJob>* out) {
    if (deadline_s_ >= 0 && until_s >= deadline_s_) expected_ = arrived_;
    std::stable_sort(pending_.begin(), pending_.end(), [](const auto& a, const auto& b) {
      return a.spec.arrival_s < b.spec.arrival_s;
    });
    auto first_later = std::find_if(pending_.begin(), pending_.end(), [until_s](const auto& j) {
      return j.spec.arrival_s > until_s;
    });
    std::move(pending_.begin(), first_later, std::back_inserter(*out));
    pending_.erase(pending_.begin(), first_later);
  }

  // The earliest an injected job may arrive after a request up to until_s; none when no job is
  // waiting and none is expected.
  std::optional<double> Next(double until_s) const {
    if (!pending_.empty()) return pending_.front().spec.arrival_s;
    if (expecting()) return until_s;
    return std::nullopt;
  }

  // Every job still waiting (the run ended before a batch took them).
  std::vector<ArrivedJob> TakeAll() { return std::exchange(pending_, {}); }

 private:
  std::vector<ArrivedJob> pending_;  // sorted by arrival once TakeUntil has run
  int64_t expected_ = 0;
  int64_t arrived_ = 0;
  double deadline_s_ = -1;
};

}  // namespace troupe
