#include "paramserver/ssd_backing.hpp"

#include <algorithm>

#include "base/status_macros.hpp"
#include "paramserver/ctr_model.hpp"

namespace troupe {

using paramserver::Key;
using paramserver::RowBatch;

Status SsdBackingStore::Load(std::span<const Key> keys, RowBatch* out) {
  const auto width = static_cast<size_t>(layout_.floats());
  std::vector<Key> on_disk;  // the keys not pending, in `keys` order
  on_disk.reserve(keys.size());
  for (const Key key : keys) {
    if (!pending_at_.contains(key)) on_disk.push_back(key);
  }
  paramserver::GetStats stats;
  RETURN_IF_ERROR(store_->Get(on_disk, &found_, &stats));
  out->keys.assign(keys.begin(), keys.end());
  out->values.assign(keys.size() * width, 0.0f);
  // found_ holds the keys the store has, in on_disk order (Load's keys are distinct).
  size_t f = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::span<float> row(out->values.data() + i * width, width);
    if (const auto it = pending_at_.find(keys[i]); it != pending_at_.end()) {
      std::copy_n(pending_.values.data() + it->second * width, width, row.begin());
    } else if (f < found_.keys.size() && found_.keys[f] == keys[i]) {
      std::copy_n(found_.values.data() + f * width, width, row.begin());
      ++f;
      ++counters_.rows_read;
    } else {
      paramserver::InitRow(keys[i], layout_, row);
      ++counters_.rows_created;
    }
  }
  counters_.bytes_read += stats.bytes_read;
  counters_.files_read += stats.files_read;
  return Status::Ok();
}

void SsdBackingStore::Merge(const RowBatch& rows) {
  const auto width = static_cast<size_t>(layout_.floats());
  for (size_t i = 0; i < rows.keys.size(); ++i) {
    const auto [it, fresh] = pending_at_.try_emplace(rows.keys[i], pending_.keys.size());
    if (fresh) {
      pending_.keys.push_back(rows.keys[i]);
      pending_.values.resize(pending_.values.size() + width);
    }
    std::copy_n(rows.values.data() + i * width, width, pending_.values.data() + it->second * width);
  }
}

Status SsdBackingStore::Flush() {
  if (pending_.keys.empty() && pending_tag_ == store_->tag()) {
    write_error_ = Status::Ok();
    return write_error_;
  }
  const uint64_t before = store_->disk_bytes();
  if (Status s = store_->Put(pending_, pending_tag_); !s.ok()) {
    ++counters_.failed_writes;
    write_error_ = s;
    return s;
  }
  // Put only adds files (compaction is separate), so the growth is what it wrote.
  counters_.bytes_written += static_cast<int64_t>(store_->disk_bytes() - before);
  counters_.rows_written += static_cast<int64_t>(pending_.keys.size());
  pending_.keys.clear();
  pending_.values.clear();
  pending_at_.clear();
  write_error_ = Status::Ok();
  return write_error_;
}

Status SsdBackingStore::Store(const RowBatch& rows) {
  if (rows.values.size() != rows.keys.size() * static_cast<size_t>(layout_.floats())) {
    return Status::InvalidInput("SsdBackingStore::Store: rows do not match the layout");
  }
  Merge(rows);
  (void)Flush();  // a failure keeps the rows pending: the owner sees blocked()
  return Status::Ok();
}

Status SsdBackingStore::StoreTagged(const RowBatch& rows, uint64_t tag) {
  pending_tag_ = tag;
  return Store(rows);
}

std::vector<Key> SsdBackingStore::KnownKeys() const {
  std::vector<Key> keys = store_->Keys();
  keys.insert(keys.end(), pending_.keys.begin(), pending_.keys.end());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace troupe
