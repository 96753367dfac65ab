#include "scheduling/queue_order.hpp"

#include <algorithm>
#include <tuple>

namespace troupe::scheduling {

bool QueueOrder::Entry::operator<(const Entry& o) const {
  return std::tie(not_starving, key, arrival_s, id) <
         std::tie(o.not_starving, o.key, o.arrival_s, o.id);
}

bool QueueOrder::SameKey(const Filed& a, const Filed& b) const {
  const bool same_entry = a.entry.not_starving == b.entry.not_starving &&
                          a.entry.key == b.entry.key && a.entry.arrival_s == b.entry.arrival_s;
  if (policy_ != Policy::kFtf) return same_entry;
  return same_entry && a.remaining_s == b.remaining_s && a.ideal_duration_s == b.ideal_duration_s;
}

QueueOrder::QueueOrder(Policy policy, FtfOrder ftf_order)
    : policy_(policy), ftf_order_(ftf_order) {}

void QueueOrder::File(const SchedJob& job) {
  Filed f;
  f.entry.not_starving = !job.starving;
  // FTF's key depends on the clock: computed per round from the parts below.
  f.entry.key = policy_ == Policy::kFtf ? 0 : PolicyKey(policy_, ftf_order_, 0, job);
  f.entry.arrival_s = job.arrival_s;
  f.entry.id = job.id;
  f.remaining_s = job.remaining_s();
  f.ideal_duration_s = job.ideal_duration_s();
  f.row = rows_.size();
  auto [it, inserted] = filed_.try_emplace(job.id, f);
  if (!inserted && SameKey(it->second, f)) return;  // e.g. a FIFO job that ran
  if (policy_ == Policy::kFtf) {
    if (inserted) {
      rows_.push_back(f);
    } else {
      f.row = it->second.row;
      it->second = f;
      rows_[f.row] = f;
    }
    return;
  }
  if (!inserted) {
    sorted_.erase(it->second.entry);
    it->second = f;
  }
  sorted_.insert(f.entry);
}

void QueueOrder::Remove(int64_t id) {
  auto it = filed_.find(id);
  if (it == filed_.end()) return;
  if (policy_ == Policy::kFtf) {
    // The last row takes the removed one's place.
    const size_t row = it->second.row;
    if (row + 1 != rows_.size()) {
      rows_[row] = rows_.back();
      rows_[row].row = row;
      filed_.find(rows_[row].entry.id)->second.row = row;
    }
    rows_.pop_back();
  } else {
    sorted_.erase(it->second.entry);
  }
  filed_.erase(it);
}

void QueueOrder::Head(double now_s, size_t count, std::vector<int64_t>& ids) {
  ids.clear();
  if (policy_ == Policy::kFtf) return FtfHead(now_s, count, ids);
  for (auto it = sorted_.begin(); it != sorted_.end() && ids.size() < count; ++it) {
    ids.push_back(it->id);
  }
}

void QueueOrder::FtfHead(double now_s, size_t count, std::vector<int64_t>& ids) {
  scratch_.clear();
  scratch_.reserve(rows_.size());
  for (const Filed& f : rows_) {
    Entry e = f.entry;
    e.key = FtfKey(ftf_order_, now_s, e.arrival_s, f.remaining_s, f.ideal_duration_s);
    scratch_.push_back(e);
  }
  // The order is total (ids are unique), so selecting the head and sorting it gives exactly the
  // first `count` jobs of a full sort.
  const size_t n = std::min(count, scratch_.size());
  if (n < scratch_.size()) std::nth_element(scratch_.begin(), scratch_.begin() + n, scratch_.end());
  std::sort(scratch_.begin(), scratch_.begin() + n);
  for (size_t i = 0; i < n; ++i) ids.push_back(scratch_[i].id);
}

}  // namespace troupe::scheduling
