// DeviceHashShard: one GPU's part of HBM-PS — an open-addressing hash table in device memory
// (linear probing, 64-bit keys, the row of a key stored in the key's slot), with batched insert,
// find, accumulate (the optimizer applied to each key's row for each of its gradient rows, in
// batch order) and erase. CudaHbmTable (cuda_hbm_table.hpp) partitions a node's batches over one
// shard per GPU; this header is plain C++17 so the CUDA sources (C++17) and the C++20 side share
// it.
//
// Contract:
//   - slots = the smallest power of two >= 2 × capacity_rows: a full shard is at most 50% loaded.
//     The caller keeps size() <= capacity_rows (CudaHbmTable enforces the row budget).
//   - Keys kEmptyKey and kErasedKey are reserved (they mark free and erased slots); callers must
//     not pass them. Erased slots are not reused until the shard is rebuilt (Rebuild, which
//     CudaHbmTable calls when live + erased slots pass 3/4 of the table).
//   - Insert: a key repeated in one batch is inserted once and takes the row of its last
//     occurrence; *inserted counts new keys, *overwritten the other occurrences.
//   - Accumulate: a key repeated in one batch is updated once per occurrence, in batch order
//     (one occurrence per key per round of kernels; rounds repeat until none is left).
//   - All host arrays are plain pointers with explicit counts; nothing is kept after a call.
//   - Every CUDA call is checked; a failure is an Internal Status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.hpp"

namespace troupe::gpu {

inline constexpr uint64_t kEmptyKey = ~uint64_t{0};
inline constexpr uint64_t kErasedKey = ~uint64_t{0} - 1;

struct ShardOptimizer {
  bool adagrad = true;  // else SGD
  float learning_rate = 0.05f;
  float epsilon = 1e-8f;
};

class DeviceHashShard {
 public:
  // width: floats per row (dim embedding floats, then optimizer state).
  static Status Create(int device, size_t capacity_rows, int32_t dim, int32_t width,
                       const ShardOptimizer& optimizer, std::unique_ptr<DeviceHashShard>* out);
  ~DeviceHashShard();
  DeviceHashShard(const DeviceHashShard&) = delete;
  DeviceHashShard& operator=(const DeviceHashShard&) = delete;

  // keys: n; rows: n × width.
  Status Insert(const uint64_t* keys, const float* rows, size_t n, size_t* inserted,
                size_t* overwritten);
  // rows: n × out_width (out_width = width or dim): each present key's row (its first out_width
  // floats); absent keys' rows are left as they were. found: n flags.
  Status Find(const uint64_t* keys, size_t n, int32_t out_width, float* rows, uint8_t* found);
  // gradients: n × dim. found: n flags (absent keys are not updated).
  Status Accumulate(const uint64_t* keys, const float* gradients, size_t n, uint8_t* found);
  Status Erase(const uint64_t* keys, size_t n, size_t* erased);
  // Every live row, sorted by key, and the shard emptied.
  Status Drain(std::vector<uint64_t>* keys, std::vector<float>* rows);
  // Drains and re-inserts the live rows, freeing the erased slots.
  Status Rebuild();

  size_t size() const { return live_; }
  size_t used_slots() const { return live_ + erased_; }
  size_t slots() const;

  // The benchmark's entry points: the same kernels on device-resident batches, no copies.
  Status InsertOnDevice(const uint64_t* d_keys, const float* d_rows, size_t n, size_t* inserted);
  Status FindOnDevice(const uint64_t* d_keys, size_t n, float* d_rows, uint8_t* d_found);

 private:
  struct Impl;
  explicit DeviceHashShard(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  size_t live_ = 0, erased_ = 0;
};

// gpu-check.sh's hash figures: a shard of 2 × `keys` slots (rounded up to a power of two) on
// GPU 0, one batch of `keys` distinct random keys with 1-float rows inserted (ending at <= 50%
// load), then found, each timed on device-resident data; best of `repeats` fresh tables.
// Declared for the benchmark: it loads the CUDA backends plugin and forwards to its table.
struct HashMeasurement {
  double insert_keys_per_s = 0, find_keys_per_s = 0;
  double load = 0;  // live keys / slots after the insert
};
Status MeasureHashShard(size_t keys, int repeats, HashMeasurement* out);

}  // namespace troupe::gpu
