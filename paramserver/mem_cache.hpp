// MEM-PS's parameter cache: one node's working parameters in main memory, in front of its
// BackingStore (the SSD-PS, or InMemoryBackingStore), under a byte budget.
//
// Scope: the cache of the node's own shard (keys with NodeOf(key) == this node). The caller
// splits a batch by owner (partitioner.hpp), fetches its local part here, and sends each remote
// part to the owner node's MemCache by message; updates pulled back from HBM-PS come in through
// Update the same way.
//
// Budget: every resident row costs RowCost(layout) = layout.bytes() + kEntryOverheadBytes (the
// key, the recency links, the frequency, the dirty flag and its index slot), so the cache holds
// capacity_rows() = budget_bytes / RowCost rows and bytes_used() <= budget_bytes always.
//
// Eviction (LRU + LFU, "least frequently used of the K least recently used"):
//   - Every resident row has a frequency: 1 when it enters the cache, +1 on every Fetch that
//     finds it (saturating). Rows are kept in recency order; a Fetch that finds a row, or a
//     miss that brings it in, makes it the most recently used.
//   - To make room, look at the K = eviction_window least recently used rows and evict the one
//     with the lowest frequency; ties go to the least recently used. Every other row looked at
//     has its frequency halved (aging), so a row that was hot once but is no longer fetched
//     loses its protection after a few evictions instead of staying forever (pure LFU's flaw).
//   - K = 1 is plain LRU. Each eviction costs O(K); every other operation is O(1) expected.
// Update changes a row's value, not its recency or frequency.
//
// Write-back: rows loaded from the store are clean; Update makes a row dirty. Evicted dirty rows
// (and Update's rows when nothing can be cached) go to BackingStore::Store, one call per
// Fetch/Update/Flush at most; clean evicted rows are dropped. Load is called once per Fetch at
// most, with that Fetch's distinct missing keys. Single-threaded; deterministic.
//
// Errors: a failed Load fails that Fetch (the hits it found were touched, nothing was admitted);
// the cache stays usable. A failed Store leaves rows that exist nowhere else, so it is sticky:
// every later call returns that status, and unstored() holds the rows it could not store.
// Configuration errors: MemCache::Create returns InvalidInput and builds nothing; nothing throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/status.hpp"
#include "base/status_or.hpp"
#include "paramserver/backing_store.hpp"
#include "paramserver/types.hpp"

namespace troupe::paramserver {

struct MemCacheConfig {
  ValueLayout layout;
  size_t budget_bytes = 0;
  int32_t eviction_window = 8;  // K above; in [1, MemCache::kMaxEvictionWindow]
};

// One Fetch. hit_rate() is the per-batch cache hit rate MEM-PS reports.
struct FetchStats {
  size_t keys = 0;          // keys asked for, duplicates included
  size_t hits = 0;          // of them, served from the cache (resident when looked up)
  size_t loaded = 0;        // distinct keys loaded from the backing store
  size_t evicted = 0;       // rows evicted to make room
  size_t written_back = 0;  // of them, dirty rows stored to the backing store

  double hit_rate() const { return keys == 0 ? 0.0 : static_cast<double>(hits) / keys; }
};

// One Update.
struct UpdateStats {
  size_t rows = 0;          // rows written
  size_t resident = 0;      // of them, already cached
  size_t evicted = 0;       // rows evicted to make room for the others
  size_t written_back = 0;  // rows stored to the backing store (evicted dirty or uncacheable)
};

class MemCache {
 public:
  static constexpr size_t kEntryOverheadBytes = 32;
  static constexpr int32_t kMaxEvictionWindow = 64;
  static size_t RowCost(const ValueLayout& layout) { return layout.bytes() + kEntryOverheadBytes; }

  // `store` must outlive the cache and use the same layout. InvalidInput on a null store, a bad
  // config (Check) or a layout mismatch.
  static StatusOr<std::unique_ptr<MemCache>> Create(MemCacheConfig config, BackingStore* store);
  // The rules on the config alone: a valid layout, eviction_window in [1, kMaxEvictionWindow], a
  // budget of fewer rows than a slot index holds. Cheap: builds nothing.
  static Status Check(const MemCacheConfig& config);

  // Sets *out to one full row per key, in `keys` order (out->keys == keys; duplicates allowed).
  // Resident keys are served from the cache; the others are loaded in one Load call and cached.
  [[nodiscard]] Status Fetch(std::span<const Key> keys, RowBatch* out, FetchStats* stats = nullptr);
  // Writes full rows back (MEM-PS applying what HBM-PS trained); later rows of a key win.
  // Non-resident rows are cached as dirty (evicting if needed). Rows that do not match the
  // layout: InvalidInput, nothing written. `already_stored`: the caller has just stored these
  // very values in the backing store (write-through), so they are cached clean and never written
  // back again.
  [[nodiscard]] Status Update(const RowBatch& rows, UpdateStats* stats = nullptr,
                              bool already_stored = false);
  // Stores every dirty row in one Store call (slot order); they stay cached, now clean.
  // *stored (if given): how many were stored.
  [[nodiscard]] Status Flush(size_t* stored = nullptr);

  // The failed Store's status (ok while the cache has not failed) and the rows it did not store.
  const Status& failure() const { return failure_; }
  const RowBatch& unstored() const { return write_back_; }

  bool Contains(Key key) const { return index_.contains(key); }
  // The cached row of `key` (no recency or frequency change), or empty if not resident.
  std::span<const float> Peek(Key key) const;
  // Frequency of a resident key, 0 if not resident.
  uint32_t Frequency(Key key) const;
  // Resident keys, most recently used first.
  std::vector<Key> KeysByRecency() const;

  size_t size() const { return resident_; }
  size_t capacity_rows() const { return capacity_; }
  size_t bytes_used() const { return size() * RowCost(config_.layout); }
  size_t budget_bytes() const { return config_.budget_bytes; }
  const ValueLayout& layout() const { return config_.layout; }

 private:
  MemCache(MemCacheConfig config, BackingStore* store);

  static constexpr uint32_t kSentinel = 0;  // slot 0: head/tail of the circular recency list
  // index_ value of a key a Fetch is loading: kPending | its index in miss_keys_.
  static constexpr uint32_t kPending = 0x8000'0000u;

  struct Entry {
    Key key = 0;
    uint32_t prev = 0;  // towards the most recently used
    uint32_t next = 0;  // towards the least recently used
    uint32_t freq = 0;
    uint32_t dirty = 0;
  };

  float* RowOf(uint32_t slot) { return arena_.data() + static_cast<size_t>(slot) * width_; }
  const float* RowOf(uint32_t slot) const {
    return arena_.data() + static_cast<size_t>(slot) * width_;
  }
  void Unlink(uint32_t slot);
  void PushFront(uint32_t slot);
  void Touch(uint32_t slot);
  // A slot for `key` (MRU, frequency 1, clean), evicting if full. Requires capacity_ > 0 and
  // `key` not resident.
  uint32_t Admit(Key key);
  uint32_t ChooseVictim();
  // Loads miss_keys_ in one call, fills their positions of *out and admits them. On error the
  // pending entries are removed and nothing is admitted.
  Status LoadMisses(RowBatch* out);
  void Evict(uint32_t slot);
  // Stores write_back_ (if not empty) and clears it; on error the cache fails, keeping it.
  Status StoreWriteBack();

  MemCacheConfig config_;
  BackingStore* store_;
  size_t width_;
  size_t capacity_;
  std::vector<Entry> entries_;                // entries_[0] is the sentinel
  std::vector<float> arena_;                  // row of slot s at s * width_ (row 0 unused)
  absl::flat_hash_map<Key, uint32_t> index_;  // resident key -> slot (and pending, in a Fetch)
  size_t resident_ = 0;
  size_t evicted_ = 0;  // by the current call
  Status failure_;

  // Per-call scratch, kept to reuse its capacity.
  std::vector<Key> miss_keys_;
  std::vector<std::pair<uint32_t, uint32_t>> miss_positions_;  // (position in keys, miss index)
  RowBatch loaded_;
  RowBatch write_back_;  // rows to Store at the end of the call (after a failure: unstored)
};

}  // namespace troupe::paramserver
