#include "paramserver/mem_cache.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "base/status_macros.hpp"

namespace troupe::paramserver {
namespace {

void AppendRow(RowBatch* batch, Key key, const float* row, size_t width) {
  batch->keys.push_back(key);
  batch->values.insert(batch->values.end(), row, row + width);
}

}  // namespace

Status MemCache::Check(const MemCacheConfig& config) {
  if (!config.layout.valid()) return Status::InvalidInput("MemCache: bad value layout");
  if (config.eviction_window < 1 || config.eviction_window > kMaxEvictionWindow) {
    return Status::InvalidInput("MemCache: eviction_window outside [1, kMaxEvictionWindow]");
  }
  if (config.budget_bytes / RowCost(config.layout) >= kPending) {
    return Status::InvalidInput("MemCache: budget holds too many rows");
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<MemCache>> MemCache::Create(MemCacheConfig config, BackingStore* store) {
  if (store == nullptr) return Status::InvalidInput("MemCache: null backing store");
  RETURN_IF_ERROR(Check(config));
  if (store->layout().floats() != config.layout.floats()) {
    return Status::InvalidInput("MemCache: backing store layout differs");
  }
  return std::unique_ptr<MemCache>(new MemCache(config, store));
}

MemCache::MemCache(MemCacheConfig config, BackingStore* store)
    : config_(config),
      store_(store),
      width_(static_cast<size_t>(config.layout.floats())),
      capacity_(config.budget_bytes / RowCost(config.layout)) {
  entries_.resize(1);  // the sentinel, linked to itself
  arena_.resize(width_);
}

void MemCache::Unlink(uint32_t slot) {
  Entry& e = entries_[slot];
  entries_[e.prev].next = e.next;
  entries_[e.next].prev = e.prev;
}

void MemCache::PushFront(uint32_t slot) {
  Entry& e = entries_[slot];
  e.prev = kSentinel;
  e.next = entries_[kSentinel].next;
  entries_[e.next].prev = slot;
  entries_[kSentinel].next = slot;
}

void MemCache::Touch(uint32_t slot) {
  Entry& e = entries_[slot];
  if (e.freq != std::numeric_limits<uint32_t>::max()) ++e.freq;
  if (entries_[kSentinel].next == slot) return;
  Unlink(slot);
  PushFront(slot);
}

uint32_t MemCache::ChooseVictim() {
  uint32_t window[kMaxEvictionWindow];   // least recently used first
  window[0] = entries_[kSentinel].prev;  // the cache is full: never the sentinel
  int32_t n = 1;
  for (uint32_t slot = entries_[window[0]].prev; slot != kSentinel && n < config_.eviction_window;
       slot = entries_[slot].prev) {
    window[n++] = slot;
  }
  uint32_t victim = window[0];  // strict < below: ties go to the least recently used
  for (int32_t i = 1; i < n; ++i) {
    if (entries_[window[i]].freq < entries_[victim].freq) victim = window[i];
  }
  for (int32_t i = 0; i < n; ++i) {
    if (window[i] != victim) entries_[window[i]].freq >>= 1;  // aging
  }
  // The window's newest member may be a victim a few evictions from now: warm what evicting it
  // touches (its index slot, its row, the entry that joins the window after it).
  const Entry& newest = entries_[window[n - 1]];
  index_.prefetch(newest.key);
  __builtin_prefetch(RowOf(window[n - 1]));
  __builtin_prefetch(&entries_[newest.prev]);
  return victim;
}

void MemCache::Evict(uint32_t slot) {
  Entry& e = entries_[slot];
  if (e.dirty) AppendRow(&write_back_, e.key, RowOf(slot), width_);
  index_.erase(e.key);
  Unlink(slot);
  ++evicted_;
}

uint32_t MemCache::Admit(Key key) {
  uint32_t slot;
  if (resident_ < capacity_) {
    slot = static_cast<uint32_t>(entries_.size());
    entries_.emplace_back();
    arena_.resize(arena_.size() + width_);
    ++resident_;
  } else {
    slot = ChooseVictim();
    Evict(slot);
  }
  entries_[slot].key = key;
  entries_[slot].freq = 1;
  entries_[slot].dirty = 0;
  PushFront(slot);
  index_.insert_or_assign(key, slot);  // replaces a pending entry
  return slot;
}

Status MemCache::StoreWriteBack() {
  if (write_back_.keys.empty()) return Status::Ok();
  Status status = store_->Store(write_back_);
  if (!status.ok()) {
    failure_ = status;
    return status;
  }
  write_back_.keys.clear();
  write_back_.values.clear();
  return status;
}

Status MemCache::LoadMisses(RowBatch* out) {
  if (miss_keys_.empty()) return Status::Ok();
  Status status = store_->Load(miss_keys_, &loaded_);
  if (status.ok() && loaded_.values.size() != miss_keys_.size() * width_) {
    status = Status::InvalidInput("MemCache::Fetch: the backing store returned " +
                                  std::to_string(loaded_.values.size()) + " floats for " +
                                  std::to_string(miss_keys_.size()) + " rows");
  }
  if (!status.ok()) {
    for (const Key key : miss_keys_) index_.erase(key);  // no longer pending
    return status;
  }
  for (const auto& [position, m] : miss_positions_) {
    std::copy_n(loaded_.values.data() + m * width_, width_, out->values.data() + position * width_);
  }
  for (size_t m = 0; m < miss_keys_.size(); ++m) {
    if (capacity_ == 0) {
      index_.erase(miss_keys_[m]);
    } else {
      std::copy_n(loaded_.values.data() + m * width_, width_, RowOf(Admit(miss_keys_[m])));
    }
  }
  return status;
}

Status MemCache::Fetch(std::span<const Key> keys, RowBatch* out, FetchStats* stats) {
  if (!failure_.ok()) return failure_;
  out->keys.assign(keys.begin(), keys.end());
  out->values.resize(keys.size() * width_);
  miss_keys_.clear();
  miss_positions_.clear();
  evicted_ = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    // A miss enters the index at once, pending, so that its duplicates find it.
    const auto [it, fresh] =
        index_.try_emplace(keys[i], kPending | static_cast<uint32_t>(miss_keys_.size()));
    const uint32_t value = it->second;
    if (fresh) miss_keys_.push_back(keys[i]);
    if (value & kPending) {
      miss_positions_.emplace_back(static_cast<uint32_t>(i), value & ~kPending);
      continue;
    }
    std::copy_n(RowOf(value), width_, out->values.data() + i * width_);
    Touch(value);
  }
  RETURN_IF_ERROR(LoadMisses(out));
  const size_t written_back = write_back_.keys.size();
  if (stats != nullptr) {
    *stats = FetchStats{keys.size(), keys.size() - miss_positions_.size(), miss_keys_.size(),
                        evicted_, written_back};
  }
  return StoreWriteBack();
}

Status MemCache::Update(const RowBatch& rows, UpdateStats* stats, bool already_stored) {
  if (!failure_.ok()) return failure_;
  if (rows.values.size() != rows.keys.size() * width_) {
    return Status::InvalidInput("MemCache::Update: rows do not match the layout");
  }
  evicted_ = 0;
  size_t resident = 0;
  for (size_t i = 0; i < rows.keys.size(); ++i) {
    const float* row = rows.values.data() + i * width_;
    const auto it = index_.find(rows.keys[i]);
    uint32_t slot;
    if (it != index_.end()) {
      slot = it->second;
      ++resident;
    } else if (capacity_ > 0) {
      slot = Admit(rows.keys[i]);
    } else {
      // Nothing can be cached: write through (unless the caller already did).
      if (!already_stored) AppendRow(&write_back_, rows.keys[i], row, width_);
      continue;
    }
    std::copy_n(row, width_, RowOf(slot));
    entries_[slot].dirty = already_stored ? 0 : 1;
  }
  if (stats != nullptr) {
    *stats = UpdateStats{rows.keys.size(), resident, evicted_, write_back_.keys.size()};
  }
  return StoreWriteBack();
}

Status MemCache::Flush(size_t* stored) {
  if (!failure_.ok()) return failure_;
  for (uint32_t slot = 1; slot < entries_.size(); ++slot) {
    Entry& e = entries_[slot];
    if (!e.dirty) continue;
    AppendRow(&write_back_, e.key, RowOf(slot), width_);
    e.dirty = 0;
  }
  if (stored != nullptr) *stored = write_back_.keys.size();
  return StoreWriteBack();
}

std::span<const float> MemCache::Peek(Key key) const {
  const auto it = index_.find(key);
  if (it == index_.end()) return {};  // (between calls no entry is pending)
  return {RowOf(it->second), width_};
}

uint32_t MemCache::Frequency(Key key) const {
  const auto it = index_.find(key);
  return it == index_.end() ? 0 : entries_[it->second].freq;
}

std::vector<Key> MemCache::KeysByRecency() const {
  std::vector<Key> keys;
  keys.reserve(index_.size());
  for (uint32_t slot = entries_[kSentinel].next; slot != kSentinel; slot = entries_[slot].next) {
    keys.push_back(entries_[slot].key);
  }
  return keys;
}

}  // namespace troupe::paramserver
