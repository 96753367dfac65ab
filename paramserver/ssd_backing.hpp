// SsdBackingStore: MEM-PS's BackingStore (paramserver/backing_store.hpp) over one node's SSD-PS
// (paramserver/ssd_store.hpp), counting the bytes each side of the SSD moved.
//
// Load reads the blocks holding the keys' rows (SsdStore::Get) and fills keys the store has never
// stored with paramserver::InitRow (a parameter's first use). Store writes the rows as new files
// (SsdStore::Put). The byte counters are what the timing model charges to the SSD stage: bytes
// read are the blocks read, bytes written the files Put added.
//
// Failed writes (an I/O error, or an injected disk fault): the rows that could not be written
// stay here, pending, and are still what Load returns for their keys, so nothing is lost and
// MEM-PS never sees the failure; Store and StoreTagged then report OK and the owner learns of it
// from blocked() / write_error(). Every later write first merges into the pending rows and writes
// them all in one Put (so an older pending value never overwrites a newer one); Flush retries
// them alone. The owner (the shard actor) stops acknowledging updates while blocked() and retries
// with back-off. Plain C++, no CAF; one owner.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <span>
#include <vector>

#include "paramserver/backing_store.hpp"
#include "paramserver/ssd_store.hpp"

namespace troupe {

struct SsdCounters {
  int64_t rows_read = 0;     // rows found on SSD-PS
  int64_t rows_created = 0;  // keys it did not hold: InitRow
  int64_t bytes_read = 0;    // blocks read
  int64_t files_read = 0;
  int64_t rows_written = 0;
  int64_t bytes_written = 0;  // files written by Put
  int64_t failed_writes = 0;  // Puts that failed (their rows stayed pending)
};

class SsdBackingStore final : public paramserver::BackingStore {
 public:
  // `store` must outlive this and hold rows of `layout`.
  SsdBackingStore(paramserver::SsdStore* store, const paramserver::ValueLayout& layout)
      : store_(store), layout_(layout), pending_tag_(store->tag()) {}

  Status Load(std::span<const paramserver::Key> keys, paramserver::RowBatch* out) override;
  Status Store(const paramserver::RowBatch& rows) override;
  const paramserver::ValueLayout& layout() const override { return layout_; }

  // Store, committing `tag` (SsdStore::Put) with the rows.
  Status StoreTagged(const paramserver::RowBatch& rows, uint64_t tag);
  // Writes the pending rows (and tag) again; OK when nothing is pending any more.
  Status Flush();

  bool blocked() const { return !write_error_.ok(); }
  const Status& write_error() const { return write_error_; }
  size_t pending_rows() const { return pending_.keys.size(); }
  const SsdCounters& counters() const { return counters_; }
  // Every key stored or pending, sorted.
  std::vector<paramserver::Key> KnownKeys() const;

 private:
  void Merge(const paramserver::RowBatch& rows);

  paramserver::SsdStore* store_;
  paramserver::ValueLayout layout_;
  SsdCounters counters_;
  paramserver::RowBatch pending_;                             // not yet durable
  absl::flat_hash_map<paramserver::Key, size_t> pending_at_;  // key -> row of pending_
  uint64_t pending_tag_;
  Status write_error_;           // the last failed write while rows are pending
  paramserver::RowBatch found_;  // scratch
};

}  // namespace troupe
