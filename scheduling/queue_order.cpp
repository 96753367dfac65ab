#include "scheduling/queue_order.hpp"

#include <algorithm>
#include <cassert>
#include <tuple>

namespace troupe::scheduling {

bool QueueOrder::Entry::operator<(const Entry& o) const {
  return std::tie(not_starving, key, arrival_s, id) <
         std::tie(o.not_starving, o.key, o.arrival_s, o.id);
}

QueueOrder::QueueOrder(const PolicyDefinition& policy, const OrderOptions& options)
    : policy_(&policy), options_(options) {}

void QueueOrder::File(const SchedJob& job) {
  assert(policy_ != nullptr);
  Filed f;
  f.entry.not_starving = !job.starving;
  f.entry.arrival_s = job.arrival_s;
  f.entry.id = job.id;
  if (policy_->key_reads_clock) return FileClock(job, f.entry);
  f.entry.key = policy_->key(job, 0, options_);
  auto [it, inserted] = filed_.try_emplace(job.id, f);
  if (!inserted) {
    const Entry& old = it->second.entry;
    if (old.not_starving == f.entry.not_starving && old.key == f.entry.key) return;  // e.g. FIFO
    sorted_.erase(old);
    it->second = f;
  }
  sorted_.insert(f.entry);
}

// The key is computed per round from the job as filed now.
void QueueOrder::FileClock(const SchedJob& job, const Entry& entry) {
  Row row{entry.not_starving, entry.arrival_s, entry.id, {}};
  const bool split = policy_->clock_terms != nullptr;
  if (split) row.terms = policy_->clock_terms(job, options_);
  auto [it, inserted] = filed_.try_emplace(job.id, Filed{entry, rows_.size()});
  if (inserted) {
    rows_.push_back(row);
    if (!split) copies_.push_back(job);
    return;
  }
  rows_[it->second.row] = row;
  if (!split) copies_[it->second.row] = job;
}

void QueueOrder::Remove(int64_t id) {
  auto it = filed_.find(id);
  if (it == filed_.end()) return;
  if (policy_->key_reads_clock) {
    // The last row takes the removed one's place.
    const size_t row = it->second.row;
    if (row + 1 != rows_.size()) {
      rows_[row] = rows_.back();
      if (!copies_.empty()) copies_[row] = std::move(copies_.back());
      filed_.find(rows_[row].id)->second.row = row;
    }
    rows_.pop_back();
    if (!copies_.empty()) copies_.pop_back();
  } else {
    sorted_.erase(it->second.entry);
  }
  filed_.erase(it);
}

void QueueOrder::Head(double now_s, size_t count, std::vector<int64_t>& ids) {
  ids.clear();
  if (policy_->key_reads_clock) return ClockHead(now_s, count, ids);
  for (auto it = sorted_.begin(); it != sorted_.end() && ids.size() < count; ++it) {
    ids.push_back(it->id);
  }
}

// One pass over the rows keeps the `count` smallest entries seen in a max-heap: most rows are
// turned away by one comparison with its top, where selecting from every row's entry (nth_element)
// wrote and moved all of them. The order is total (ids are unique), so the heap ends holding
// exactly the first `count` jobs of a full sort.
void QueueOrder::ClockHead(double now_s, size_t count, std::vector<int64_t>& ids) {
  const size_t n = std::min(count, rows_.size());
  scratch_.clear();
  if (n == 0) return;
  scratch_.reserve(n);
  const auto consider = [this, n](const Entry& e) {
    if (scratch_.size() < n) {
      scratch_.push_back(e);
      std::push_heap(scratch_.begin(), scratch_.end());
    } else if (e < scratch_.front()) {
      std::pop_heap(scratch_.begin(), scratch_.end());
      scratch_.back() = e;
      std::push_heap(scratch_.begin(), scratch_.end());
    }
  };
  if (policy_->clock_terms != nullptr) {
    const auto key = policy_->clock_key;
    for (const Row& r : rows_) {
      consider(Entry{r.not_starving, key(r.terms, now_s, options_), r.arrival_s, r.id});
    }
  } else {
    for (size_t i = 0; i < rows_.size(); ++i) {
      const Row& r = rows_[i];
      consider(Entry{r.not_starving, policy_->key(copies_[i], now_s, options_), r.arrival_s, r.id});
    }
  }
  std::sort_heap(scratch_.begin(), scratch_.end());
  for (const Entry& e : scratch_) ids.push_back(e.id);
}

}  // namespace troupe::scheduling
