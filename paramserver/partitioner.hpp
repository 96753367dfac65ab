// Splitting a batch's keys by owner and folding its duplicates, with the inverse mappings that
// scatter the results back.
//
// A training batch references the same hot keys many times; the pipeline fetches each key once
// (DedupKeys), then sends each owner its share (PartitionByNode across nodes, PartitionByGpu
// across one node's GPUs, the types.hpp partition policy), and scatters the rows that come back
// to the positions that asked for them (ScatterRows, ExpandRows). Gradients of duplicate keys are
// summed into one row per key (SumDuplicateRows) before they are applied.
//
// Contracts:
//   - Every output keeps input order: unique keys in order of first occurrence; within a part,
//     keys in input order. Nothing depends on hashing order, so results are deterministic.
//   - Row widths are passed explicitly (`floats` per row): full rows (ValueLayout::floats()) and
//     gradient rows (ValueLayout::dim) go through the same functions.
//   - The *Into variants clear and refill `out`, reusing its buffers (no allocation once warm).
//   - Arguments that do not fit (no owners, rows that do not match their keys) return
//     InvalidInput naming the function; `out` is then unspecified. Nothing throws.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/status.hpp"
#include "base/status_or.hpp"
#include "paramserver/types.hpp"

namespace troupe::paramserver {

// keys[i] == unique[index[i]] for every i; unique holds each key once, in first-occurrence order.
struct Dedup {
  std::vector<Key> unique;
  std::vector<uint32_t> index;
};

// Dedup with a reusable scratch map (clear()ed, capacity kept, between calls).
class Deduper {
 public:
  void Into(std::span<const Key> keys, Dedup* out);

 private:
  absl::flat_hash_map<Key, uint32_t> seen_;
};

Dedup DedupKeys(std::span<const Key> keys);

// keys.size() rows: row i is unique_rows' row index[i] (`floats` floats per row).
void ExpandRows(const RowBatch& unique_rows, const Dedup& dedup, int32_t floats, RowBatch* out);

// One row per unique key: the sum of the rows of its occurrences in `rows` (rows[i] belongs to
// dedup's i-th input key). out->keys == dedup.unique.
[[nodiscard]] Status SumDuplicateRows(std::span<const float> rows, const Dedup& dedup,
                                      int32_t floats, RowBatch* out);

// The keys of a batch split among `parts` owners: keys[p][j] is input key positions[p][j].
struct Partition {
  std::vector<std::vector<Key>> keys;
  std::vector<std::vector<uint32_t>> positions;

  size_t parts() const { return keys.size(); }
};

// Owner of key k: NodeOf(k, nodes). Requires nodes >= 1.
[[nodiscard]] Status PartitionByNodeInto(std::span<const Key> keys, int32_t nodes, Partition* out);
StatusOr<Partition> PartitionByNode(std::span<const Key> keys, int32_t nodes);

// Owner of key k: GpuOf(k, nodes, gpus_per_node). Requires nodes, gpus_per_node >= 1.
[[nodiscard]] Status PartitionByGpuInto(std::span<const Key> keys, int32_t nodes,
                                        int32_t gpus_per_node, Partition* out);
StatusOr<Partition> PartitionByGpu(std::span<const Key> keys, int32_t nodes, int32_t gpus_per_node);

// Part p of `batch` (whose keys were partitioned into `partition`) as its own batch, rows
// included, for sending to owner p.
RowBatch SplitRows(const RowBatch& batch, const Partition& partition, size_t part, int32_t floats);

// The inverse: `out` (resized to the partition's total keys) gets part p's row j at position
// positions[p][j]. parts[p] must hold partition.keys[p] in order.
[[nodiscard]] Status ScatterRows(std::span<const RowBatch> parts, const Partition& partition,
                                 int32_t floats, RowBatch* out);

}  // namespace troupe::paramserver
