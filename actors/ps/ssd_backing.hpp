// SsdBackingStore: MEM-PS's BackingStore (paramserver/backing_store.hpp) over one node's SSD-PS
// (paramserver/ssd_store.hpp), counting the bytes each side of the SSD moved.
//
// Load reads the keys' files whole (SsdStore::Get) and fills keys the store has never stored with
// paramserver::InitRow (a parameter's first use). Store writes the rows as new files
// (SsdStore::Put) and remembers their keys, so that KnownKeys() lists every key the shard ever
// stored. The byte counters are what the timing model charges to the SSD stage: bytes read are
// whole files, bytes written the files Put added. Plain C++, no CAF; one owner (the shard actor).
#pragma once

#include <absl/container/flat_hash_set.h>

#include <cstdint>
#include <span>
#include <vector>

#include "paramserver/backing_store.hpp"
#include "paramserver/ssd_store.hpp"

namespace troupe {

struct SsdCounters {
  int64_t rows_read = 0;     // rows found on SSD-PS
  int64_t rows_created = 0;  // keys it did not hold: InitRow
  int64_t bytes_read = 0;    // whole files
  int64_t files_read = 0;
  int64_t rows_written = 0;
  int64_t bytes_written = 0;  // files written by Put
};

class SsdBackingStore final : public paramserver::BackingStore {
 public:
  // `store` must outlive this and hold rows of `layout`.
  SsdBackingStore(paramserver::SsdStore* store, const paramserver::ValueLayout& layout)
      : store_(store), layout_(layout) {}

  paramserver::PsStatus Load(std::span<const paramserver::Key> keys,
                             paramserver::RowBatch* out) override;
  paramserver::PsStatus Store(const paramserver::RowBatch& rows) override;
  const paramserver::ValueLayout& layout() const override { return layout_; }

  const SsdCounters& counters() const { return counters_; }
  // Every key ever stored, sorted.
  std::vector<paramserver::Key> KnownKeys() const;

 private:
  paramserver::SsdStore* store_;
  paramserver::ValueLayout layout_;
  SsdCounters counters_;
  absl::flat_hash_set<paramserver::Key> known_;
  paramserver::RowBatch found_;  // scratch
};

}  // namespace troupe
