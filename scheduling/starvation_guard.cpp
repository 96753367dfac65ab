#include "scheduling/starvation_guard.hpp"

#include "scheduling/policy.hpp"

namespace troupe::scheduling {

void StarvationGuard::Track(const SchedJob& job) {
  if (!enabled()) return;
  const double since = WaitingSince(job);
  auto [it, inserted] = since_.try_emplace(job.id, since);
  if (!inserted) {
    if (it->second == since) return;
    by_wait_.erase({it->second, job.id});
    it->second = since;
  }
  by_wait_.insert({since, job.id});
}

void StarvationGuard::Forget(int64_t id) {
  auto it = since_.find(id);
  if (it == since_.end()) return;
  by_wait_.erase({it->second, id});
  since_.erase(it);
}

void StarvationGuard::Due(double now_s, std::vector<int64_t>& ids) const {
  ids.clear();
  for (const auto& [since, id] : by_wait_) {
    if (!WaitedTooLong(now_s, starvation_s_, since)) break;
    ids.push_back(id);
  }
}

}  // namespace troupe::scheduling
