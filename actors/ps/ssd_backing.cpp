#include "actors/ps/ssd_backing.hpp"

#include <algorithm>

#include "paramserver/ctr_model.hpp"

namespace troupe {

using paramserver::Key;
using paramserver::PsStatus;
using paramserver::RowBatch;

PsStatus SsdBackingStore::Load(std::span<const Key> keys, RowBatch* out) {
  paramserver::GetStats stats;
  if (PsStatus s = store_->Get(keys, &found_, &stats); !s.ok()) return s;
  const auto width = static_cast<size_t>(layout_.floats());
  out->keys.assign(keys.begin(), keys.end());
  out->values.assign(keys.size() * width, 0.0f);
  // found_ holds the keys the store has, in `keys` order (Load's keys are distinct).
  size_t f = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::span<float> row(out->values.data() + i * width, width);
    if (f < found_.keys.size() && found_.keys[f] == keys[i]) {
      std::copy_n(found_.values.data() + f * width, width, row.begin());
      ++f;
    } else {
      paramserver::InitRow(keys[i], layout_, row);
      ++counters_.rows_created;
    }
  }
  counters_.rows_read += static_cast<int64_t>(f);
  counters_.bytes_read += stats.bytes_read;
  counters_.files_read += stats.files_read;
  return PsStatus::Ok();
}

PsStatus SsdBackingStore::Store(const RowBatch& rows) {
  const uint64_t before = store_->disk_bytes();
  if (PsStatus s = store_->Put(rows); !s.ok()) return s;
  // Put only adds files (compaction is separate), so the growth is what it wrote.
  counters_.bytes_written += static_cast<int64_t>(store_->disk_bytes() - before);
  counters_.rows_written += static_cast<int64_t>(rows.size());
  known_.insert(rows.keys.begin(), rows.keys.end());
  return PsStatus::Ok();
}

std::vector<Key> SsdBackingStore::KnownKeys() const {
  std::vector<Key> keys(known_.begin(), known_.end());
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace troupe
