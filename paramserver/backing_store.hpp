// What MEM-PS (mem_cache.hpp) keeps behind its cache: the node's full parameter shard.
//
// BackingStore is the narrow interface the SSD-PS implements; InMemoryBackingStore is the one for
// tests and for runs without SSDs. Both deal in full rows (ValueLayout::floats() per key) and in
// batches: MEM-PS calls Load once per Fetch with that Fetch's missing keys, and Store once per
// call with the dirty rows it evicted or flushed. A store that can fail (I/O) says so in the
// Status it returns; InMemoryBackingStore fails only on rows that do not match its layout.
// InMemoryBackingStore::Create returns InvalidInput for an invalid layout; nothing throws.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/status.hpp"
#include "base/status_or.hpp"
#include "paramserver/types.hpp"

namespace troupe::paramserver {

class BackingStore {
 public:
  virtual ~BackingStore() = default;

  // Sets *out to one row per key, in `keys` order (out->keys == keys). A key the store has never
  // stored gets the store's initial row (a parameter's first use). `keys` holds no duplicates.
  // On error *out is unspecified.
  virtual Status Load(std::span<const Key> keys, RowBatch* out) = 0;
  // Persists `rows`, replacing any older value of the same keys (later rows of a key win). On
  // error the store holds each row either at its old or at its new value.
  virtual Status Store(const RowBatch& rows) = 0;
  virtual const ValueLayout& layout() const = 0;
};

// A flat_hash_map from key to a slot of one float arena. Counts its calls and rows so tests can
// check batching. Deterministic: the initial row is a function of the key alone.
class InMemoryBackingStore final : public BackingStore {
 public:
  // Fills a never-stored key's row (layout.floats() floats, zeroed beforehand).
  using RowInit = std::function<void(Key, std::span<float>)>;

  static StatusOr<std::unique_ptr<InMemoryBackingStore>> Create(ValueLayout layout,
                                                                RowInit init = {}) {
    if (!layout.valid()) return Status::InvalidInput("InMemoryBackingStore: bad value layout");
    return std::unique_ptr<InMemoryBackingStore>(new InMemoryBackingStore(layout, std::move(init)));
  }

  Status Load(std::span<const Key> keys, RowBatch* out) override {
    const auto width = static_cast<size_t>(layout_.floats());
    out->keys.assign(keys.begin(), keys.end());
    out->values.resize(keys.size() * width);
    FindSlots(keys, /*insert=*/false);
    for (size_t i = 0; i < keys.size(); ++i) {
      PrefetchRow(i + kPrefetchDistance);
      float* row = out->values.data() + i * width;
      if (slot_scratch_[i] != kAbsent) {
        std::copy_n(arena_.data() + slot_scratch_[i] * width, width, row);
      } else {
        std::fill_n(row, width, 0.0f);
        if (init_) init_(keys[i], {row, width});
      }
    }
    ++load_calls_;
    rows_loaded_ += keys.size();
    return Status::Ok();
  }

  Status Store(const RowBatch& rows) override {
    const auto width = static_cast<size_t>(layout_.floats());
    if (rows.values.size() != rows.keys.size() * width) {
      return Status::InvalidInput("InMemoryBackingStore::Store: rows do not match the layout");
    }
    FindSlots(rows.keys, /*insert=*/true);
    for (size_t i = 0; i < rows.keys.size(); ++i) {
      PrefetchRow(i + kPrefetchDistance);
      std::copy_n(rows.values.data() + i * width, width, arena_.data() + slot_scratch_[i] * width);
    }
    ++store_calls_;
    rows_stored_ += rows.keys.size();
    return Status::Ok();
  }

  const ValueLayout& layout() const override { return layout_; }

  // The stored row of `key`, or an empty span if it was never stored.
  std::span<const float> Peek(Key key) const {
    const auto it = slots_.find(key);
    if (it == slots_.end()) return {};
    const auto width = static_cast<size_t>(layout_.floats());
    return {arena_.data() + it->second * width, width};
  }
  size_t size() const { return slots_.size(); }
  int64_t load_calls() const { return load_calls_; }
  int64_t store_calls() const { return store_calls_; }
  int64_t rows_loaded() const { return rows_loaded_; }
  int64_t rows_stored() const { return rows_stored_; }

 private:
  InMemoryBackingStore(ValueLayout layout, RowInit init)
      : layout_(layout), init_(std::move(init)) {}

  // Batches run in two passes, keys then rows, each prefetching this many entries ahead.
  static constexpr size_t kPrefetchDistance = 8;
  static constexpr size_t kAbsent = ~size_t{0};

  // slot_scratch_[i] = the slot of keys[i] (kAbsent if absent and !insert; a new slot if insert).
  void FindSlots(std::span<const Key> keys, bool insert) {
    slot_scratch_.resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      if (i + kPrefetchDistance < keys.size()) slots_.prefetch(keys[i + kPrefetchDistance]);
      if (insert) {
        const auto [it, fresh] = slots_.try_emplace(keys[i], slots_.size());
        if (fresh) arena_.resize(arena_.size() + static_cast<size_t>(layout_.floats()));
        slot_scratch_[i] = it->second;
      } else {
        const auto it = slots_.find(keys[i]);
        slot_scratch_[i] = it == slots_.end() ? kAbsent : it->second;
      }
    }
  }
  void PrefetchRow(size_t i) const {
    if (i < slot_scratch_.size() && slot_scratch_[i] != kAbsent) {
      __builtin_prefetch(arena_.data() + slot_scratch_[i] * static_cast<size_t>(layout_.floats()));
    }
  }

  ValueLayout layout_;
  RowInit init_;
  absl::flat_hash_map<Key, size_t> slots_;
  std::vector<float> arena_;
  std::vector<size_t> slot_scratch_;
  int64_t load_calls_ = 0;
  int64_t store_calls_ = 0;
  int64_t rows_loaded_ = 0;
  int64_t rows_stored_ = 0;
};

}  // namespace troupe::paramserver
