#include "scheduling/starvation_guard.hpp"

#include <algorithm>
#include <functional>

#include "scheduling/policy.hpp"

namespace troupe::scheduling {

bool StarvationGuard::Current(const Watch& w) const {
  auto it = since_.find(w.second);
  return it != since_.end() && it->second == w.first;
}

void StarvationGuard::Push(const Watch& w) {
  heap_.push_back(w);
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

void StarvationGuard::Pop() {
  std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
  heap_.pop_back();
}

// Drops the outdated entries once they outnumber the tracked jobs three to one: O(n) every 2n
// pushes at least. (A job tracked back to an earlier start may keep two equal entries; Due lists
// it once.)
void StarvationGuard::Rebuild() {
  std::erase_if(heap_, [this](const Watch& w) { return !Current(w); });
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
}

void StarvationGuard::Track(const SchedJob& job) {
  if (!enabled()) return;
  const double since = WaitingSince(job);
  auto [it, inserted] = since_.try_emplace(job.id, since);
  if (!inserted) {
    if (it->second <= since) return;  // a later start: the entry stays, a lower bound (Due)
    it->second = since;               // an earlier one: the old entry is outdated now
  }
  Push({since, job.id});
  if (heap_.size() > 3 * since_.size() + 1024) Rebuild();
}

void StarvationGuard::Forget(int64_t id) { since_.erase(id); }

void StarvationGuard::Due(double now_s, absl::FunctionRef<double(int64_t)> waiting_since,
                          std::vector<int64_t>& ids) {
  ids.clear();
  due_.clear();
  while (!heap_.empty()) {
    const Watch top = heap_.front();
    const bool current = Current(top);
    if (current) {
      // The job may have run since it was tracked: its wait then starts later.
      const double since = waiting_since(top.second);
      if (since > top.first) {
        Pop();
        since_[top.second] = since;
        Push({since, top.second});
        continue;
      }
    }
    if (current && !WaitedTooLong(now_s, starvation_s_, top.first)) break;
    Pop();
    // A job tracked twice at the same start (tracked, moved, tracked back) is due once.
    if (current && (due_.empty() || due_.back() != top)) due_.push_back(top);
  }
  // Still tracked until the owner forgets them: back in the heap, in order.
  for (const Watch& w : due_) {
    Push(w);
    ids.push_back(w.second);
  }
}

}  // namespace troupe::scheduling
