#include "scheduling/queue_order.hpp"

#include <algorithm>
#include <cassert>
#include <tuple>

namespace troupe::scheduling {

bool QueueOrder::Entry::operator<(const Entry& o) const {
  return std::tie(not_starving, key, arrival_s, id) <
         std::tie(o.not_starving, o.key, o.arrival_s, o.id);
}

bool QueueOrder::Sorted::operator<(const Sorted& o) const {
  return std::tie(not_starving, key, arrival_s, queued.id) <
         std::tie(o.not_starving, o.key, o.arrival_s, o.queued.id);
}

QueueOrder::Sorted QueueOrder::SortedOf(const Entry& entry, const QueuedJob& queued) {
  Sorted sorted{entry.not_starving, entry.key, entry.arrival_s, queued};
  sorted.queued.id = entry.id;
  sorted.queued.job = entry.job;
  return sorted;
}

QueueOrder::QueueOrder(const PolicyDefinition& policy, const OrderOptions& options)
    : policy_(&policy), options_(options) {}

void QueueOrder::File(const SchedJob& job) {
  assert(policy_ != nullptr);
  Filed f;
  f.entry.not_starving = !(job.starving && policy_->starving_first);
  f.entry.arrival_s = job.arrival_s;
  f.entry.id = job.id;
  f.entry.job = &job;
  if (policy_->key_reads_clock) return FileClock(job, f.entry);
  f.entry.key = policy_->key(job, 0, options_);
  const Sorted sorted = SortedOf(f.entry, QueuedJobOf(job));
  auto [it, inserted] = filed_.try_emplace(job.id, f);
  if (!inserted) {
    const Entry& old = it->second.entry;
    auto at = sorted_.find(SortedOf(old, {}));
    assert(at != sorted_.end());
    if (old.not_starving == f.entry.not_starving && old.key == f.entry.key &&
        at->queued == sorted.queued) {
      return;  // e.g. FIFO
    }
    sorted_.erase(at);
    it->second = f;
  }
  sorted_.insert(sorted);
}

// The key is computed per round from the job as filed now.
void QueueOrder::FileClock(const SchedJob& job, const Entry& entry) {
  Row row{entry.not_starving, entry.arrival_s, entry.id, &job, {}};
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
    sorted_.erase(SortedOf(it->second.entry, {}));
  }
  filed_.erase(it);
}

void QueueOrder::Head(double now_s, size_t count, std::vector<const SchedJob*>& jobs) {
  jobs.clear();
  if (policy_->key_reads_clock) return ClockHead(now_s, count, jobs);
  for (auto it = sorted_.begin(); it != sorted_.end() && jobs.size() < count; ++it) {
    jobs.push_back(it->queued.job);
  }
}

void QueueOrder::Head(double now_s, size_t count, std::vector<QueuedJob>& jobs) {
  jobs.clear();
  if (policy_->key_reads_clock) {
    std::vector<const SchedJob*>& head = clock_head_;
    head.clear();
    ClockHead(now_s, count, head);
    for (const SchedJob* job : head) jobs.push_back(QueuedJobOf(*job));
    return;
  }
  for (auto it = sorted_.begin(); it != sorted_.end() && jobs.size() < count; ++it) {
    jobs.push_back(it->queued);
  }
}

QueueOrder::Entry QueueOrder::RowEntry(size_t i, double now_s) const {
  const Row& r = rows_[i];
  const double key = policy_->clock_terms != nullptr ? policy_->clock_key(r.terms, now_s, options_)
                                                     : policy_->key(copies_[i], now_s, options_);
  return Entry{r.not_starving, key, r.arrival_s, r.id, r.job};
}

// The `count` smallest entries seen so far are kept in a max-heap. It is seeded with the smallest
// of every stride-th row (a sample of ~16 heads), so that its top is a tight bound and one
// comparison turns away most of the other rows, whichever way the keys trend along the rows
// (rows are in filing order). The order is total (ids are unique), so the heap ends holding
// exactly the first `count` jobs of a full sort; no row's entry is written unless it may be in.
void QueueOrder::ClockHead(double now_s, size_t count, std::vector<const SchedJob*>& jobs) {
  const size_t n = std::min(count, rows_.size());
  scratch_.clear();
  if (n == 0) return;
  const size_t stride = std::max<size_t>(1, rows_.size() / (16 * n));
  for (size_t i = 0; i < rows_.size(); i += stride) scratch_.push_back(RowEntry(i, now_s));
  if (scratch_.size() > n) {
    std::nth_element(scratch_.begin(), scratch_.begin() + n, scratch_.end());
    scratch_.resize(n);
  }
  std::make_heap(scratch_.begin(), scratch_.end());
  for (size_t base = 0; stride > 1 && base < rows_.size(); base += stride) {
    const size_t end = std::min(base + stride, rows_.size());
    for (size_t i = base + 1; i < end; ++i) {
      const Entry e = RowEntry(i, now_s);
      if (!(e < scratch_.front())) continue;
      std::pop_heap(scratch_.begin(), scratch_.end());
      scratch_.back() = e;
      std::push_heap(scratch_.begin(), scratch_.end());
    }
  }
  std::sort_heap(scratch_.begin(), scratch_.end());
  for (const Entry& e : scratch_) jobs.push_back(e.job);
}

}  // namespace troupe::scheduling
