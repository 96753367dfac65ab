// ShardCore: one node's share of the hierarchical parameter server — the keys it owns
// (NodeOf(key, nodes) == shard) across HBM-PS, MEM-PS and SSD-PS — as plain C++ (no CAF). The
// shard actor (shard_actor.hpp) adds the ordering, the deferrals and the timing.
//
// Tiers and the one invariant that makes training lossless:
//   - HBM-PS (paramserver::HbmTable, CPU backend) holds the working rows of the steps in flight.
//     A key is pinned there from the first step that prepares it until the last such step is
//     applied; while it is there, HBM-PS holds its only current value.
//   - MEM-PS (paramserver::MemCache, LRU+LFU, byte budget) caches rows in front of SSD-PS
//     (SsdBackingStore over paramserver::SsdStore); a key read for the first time anywhere is
//     created there with paramserver::InitRow. Rows leave HBM-PS back into MEM-PS (Update), whose
//     evictions dump dirty rows to SSD-PS as new files.
// Prepare must be called in step order (all prepares of step s before any of s + 1) and Apply
// once per step, in step order, after that step's prepares. Every result depends only on the
// calls' order and arguments: deterministic.
//
// Update rule: Apply sums the nodes' gradient rows of each key in node order, then runs
// paramserver::ApplyAdagrad once per key — the same function the reference trainer uses.
//
// Faults (docs/paramserver.md, "Faults"):
//   - With options.durable_updates, Apply first writes the step's updated rows (every key of the
//     step, pinned or not) to SSD-PS with the tag step + 1, then caches them clean in MEM-PS: once
//     Apply(s) returned and !blocked(), every update up to step s is durable. Open on an existing
//     folder is the recovery: recovered_step() is the last durable step (tag - 1).
//   - A failed SSD-PS write (write_fault(), or a real I/O error) does not fail the call: its rows
//     stay pending in the backing store (still readable), the core is blocked() and WriteError()
//     names the file; RetryWrites() writes them again. A failed compaction also blocks until a
//     retry compacts. Nothing is lost either way.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "messages/tier_counts.hpp"
#include "paramserver/hbm_table.hpp"
#include "paramserver/mem_cache.hpp"
#include "paramserver/ps_options.hpp"
#include "paramserver/ssd_backing.hpp"
#include "paramserver/ssd_fault.hpp"
#include "paramserver/ssd_store.hpp"

namespace troupe {

// What one Prepare did (compaction_bytes stays 0: compaction follows an Apply).
using PrepareStats = TierCounts;

// What one Apply did (its MEM-PS write-back and any compaction after it).
struct ApplyStats {
  int64_t rows_released = 0;
  int64_t ssd_bytes_written = 0;
  int64_t compaction_bytes = 0;  // read + written by a compaction
  bool compacted = false;
};

// One node's gradient rows for this shard: keys sorted, `dim` floats each.
struct GradientPart {
  std::span<const paramserver::Key> keys;
  std::span<const float> gradients;
};

class ShardCore {
 public:
  // Opens (creates) the shard's SSD-PS in `dir`. Errors name the folder or the budget.
  static Status Open(const PsOptions& options, int32_t shard, const std::string& dir,
                     std::unique_ptr<ShardCore>* out);

  // Whether the keys not yet in HBM-PS fit there now, GPU by GPU.
  bool Fits(std::span<const paramserver::Key> keys) const;
  // Brings `keys` (distinct) into HBM-PS for `step` and pins them until Apply(step).
  // Requires Fits(keys).
  Status Prepare(int64_t step, std::span<const paramserver::Key> keys, PrepareStats* stats);
  // The embedding weights (dim floats) of pinned keys, in `keys` order.
  Status Pull(std::span<const paramserver::Key> keys, paramserver::RowBatch* out);
  // Applies step's gradients (parts in node order), unpins the step's keys and releases those
  // no later step pinned into MEM-PS, then compacts SSD-PS if it passed its threshold.
  Status Apply(int64_t step, std::span<const GradientPart> parts, ApplyStats* stats);
  // After the last Apply: writes MEM-PS's dirty rows back (may leave the core blocked).
  Status FlushMem();
  // Then, when !blocked(): every parameter of the shard (full rows, keys sorted).
  Status Final(paramserver::RowBatch* out);

  // Failed writes (see above).
  bool blocked() const { return backing_->blocked() || !compaction_error_.ok(); }
  const Status& WriteError() const;
  Status RetryWrites();
  paramserver::SsdWriteFault& write_fault() { return *write_fault_; }
  // The last step whose updates SSD-PS holds (durable_updates; -1: none), and the bytes Open read
  // to recover the store (every file's header and keys).
  int64_t recovered_step() const { return static_cast<int64_t>(ssd_->tag()) - 1; }
  int64_t recovery_bytes() const { return recovery_bytes_; }

  size_t hbm_rows() const { return pinned_.size(); }
  size_t mem_rows() const { return mem_->size(); }
  size_t mem_capacity_rows() const { return mem_->capacity_rows(); }
  const paramserver::SsdStore& ssd() const { return *ssd_; }
  int64_t compactions() const { return compactions_; }

 private:
  ShardCore(const PsOptions& options, int32_t shard) : options_(options), shard_(shard) {}
  // MaybeCompact; an I/O failure is kept in compaction_error_ (blocked), not returned.
  Status Compact(ApplyStats* stats);

  PsOptions options_;
  int32_t shard_;
  paramserver::ValueLayout layout_;
  size_t hbm_rows_per_gpu_ = 0;
  std::unique_ptr<paramserver::SsdWriteFault> write_fault_;
  std::unique_ptr<paramserver::SsdStore> ssd_;
  std::unique_ptr<SsdBackingStore> backing_;
  std::unique_ptr<paramserver::MemCache> mem_;
  std::unique_ptr<paramserver::HbmTable> hbm_;
  absl::flat_hash_map<paramserver::Key, int64_t> pinned_;  // key in HBM-PS -> last step using it
  std::map<int64_t, std::vector<paramserver::Key>> step_keys_;  // in flight: keys each step pinned
  int64_t compactions_ = 0;
  int64_t recovery_bytes_ = 0;
  Status compaction_error_;
};

}  // namespace troupe
