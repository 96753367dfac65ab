// TierCounts: what the tiers of the hierarchical parameter server did for some keys — how many
// were wanted, where each was found (HBM-PS, MEM-PS, SSD-PS, or created), and the SSD-PS bytes it
// cost. One Prepare fills one; the shard's report of a step, a batch's record and the run's
// summary each sum them with operator+=, so a counter added here is summed everywhere.
// Plain data, shared by paramserver/ and the actors' messages (the inspect needs no CAF header).
#pragma once

#include <cstdint>

namespace troupe {

struct TierCounts {
  int64_t keys = 0;               // keys wanted
  int64_t hbm_hits = 0;           // of them, already in HBM-PS
  int64_t mem_keys = 0;           // fetched from MEM-PS (the others)
  int64_t mem_hits = 0;           // of them, resident in MEM-PS
  int64_t ssd_rows_read = 0;      // loaded from SSD-PS
  int64_t rows_created = 0;       // first use anywhere: InitRow
  int64_t ssd_bytes_read = 0;     // SSD-PS reads (the ~4 KiB blocks holding the rows)
  int64_t ssd_bytes_written = 0;  // SSD-PS writes (evicted rows, durable updates)
  int64_t compaction_bytes = 0;   // read and written by SSD-PS compaction

  TierCounts& operator+=(const TierCounts& o) {
    keys += o.keys;
    hbm_hits += o.hbm_hits;
    mem_keys += o.mem_keys;
    mem_hits += o.mem_hits;
    ssd_rows_read += o.ssd_rows_read;
    rows_created += o.rows_created;
    ssd_bytes_read += o.ssd_bytes_read;
    ssd_bytes_written += o.ssd_bytes_written;
    compaction_bytes += o.compaction_bytes;
    return *this;
  }

  // Each tier's own hit rate (0 when it was asked nothing): HBM-PS of the keys wanted, MEM-PS of
  // HBM-PS's misses, SSD-PS of MEM-PS's misses (the others are first uses); and memory's combined
  // one (HBM-PS and MEM-PS together, of the keys wanted).
  double hbm_hit_rate() const { return Ratio(hbm_hits, keys); }
  double mem_hit_rate() const { return Ratio(mem_hits, mem_keys); }
  double ssd_hit_rate() const { return Ratio(ssd_rows_read, mem_keys - mem_hits); }
  double memory_hit_rate() const { return Ratio(hbm_hits + mem_hits, keys); }

 private:
  static double Ratio(int64_t part, int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  }
};

template <class Inspector>
auto inspect(Inspector& f, TierCounts& x) {
  return f(x.keys, x.hbm_hits, x.mem_keys, x.mem_hits, x.ssd_rows_read, x.rows_created,
           x.ssd_bytes_read, x.ssd_bytes_written, x.compaction_bytes);
}

}  // namespace troupe
