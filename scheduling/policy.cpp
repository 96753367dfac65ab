#include "scheduling/policy.hpp"

#include <algorithm>
#include <tuple>

namespace troupe::scheduling {
namespace {

bool ByArrival(const SchedJob* a, const SchedJob* b) {
  return std::tie(a->arrival_s, a->id) < std::tie(b->arrival_s, b->id);
}

// Sorts by a key (smaller first), then arrival, then id.
template <class Key>
void SortByKey(std::vector<const SchedJob*>& jobs, Key key) {
  std::sort(jobs.begin(), jobs.end(), [&](const SchedJob* a, const SchedJob* b) {
    const double ka = key(*a);
    const double kb = key(*b);
    if (ka != kb) return ka < kb;
    return ByArrival(a, b);
  });
}

}  // namespace

std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kFifo:
      return "fifo";
    case Policy::kSrtf:
      return "srtf";
    case Policy::kLas:
      return "las";
    case Policy::kFtf:
      return "ftf";
  }
  return "?";
}

void OrderJobs(Policy policy, double now_s, std::vector<const SchedJob*>& jobs) {
  switch (policy) {
    case Policy::kFifo:
      // The queue is kept in arrival order, so this is usually a linear check.
      if (!std::is_sorted(jobs.begin(), jobs.end(), ByArrival)) {
        std::sort(jobs.begin(), jobs.end(), ByArrival);
      }
      return;
    case Policy::kSrtf:
      SortByKey(jobs, [](const SchedJob& j) { return j.remaining_s(); });
      return;
    case Policy::kLas:
      SortByKey(jobs, [](const SchedJob& j) { return j.attained_gpu_s; });
      return;
    case Policy::kFtf:
      SortByKey(jobs, [now_s](const SchedJob& j) {
        const double ideal = std::max(j.ideal_duration_s(), 1e-9);
        return -((now_s - j.arrival_s + j.remaining_s()) / ideal);  // largest rho first
      });
      return;
  }
}

}  // namespace troupe::scheduling
