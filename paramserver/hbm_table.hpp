// HBM-PS: one node's working parameters, in a hash table spread over the node's GPUs.
//
// HbmBackend is the batched interface (insert, get, accumulate, erase, drain) a CPU and a CUDA
// implementation share; CpuHbmTable is the CPU one; HbmTable is the node's table, owning the
// backend its config names. Every operation partitions its batch by owner GPU
// (GpuOf(key, nodes, gpus_per_node), partitioner.hpp) and applies each part to that GPU's shard,
// as the paper's multi-GPU hash table does. Keys of other nodes are accepted: HBM-PS also holds
// the remote parameters the node's batches reference.
//
// Budget: each GPU shard may hold bytes_per_gpu; a row costs RowCost(layout) = sizeof(Key) +
// layout.bytes() (a GPU hash table slot holds the key beside the value), so a shard holds
// bytes_per_gpu / RowCost rows. Insert never exceeds it: rows that do not fit are rejected, and
// listed, the others inserted. Inserting a key already present overwrites it at no cost (a key
// repeated in one Insert: the later row wins).
//
// Rows: a full row is layout.floats() floats, the embedding (dim) then the optimizer's state.
// Accumulate takes one gradient row of `dim` floats per key and applies the optimizer
// (OptimizerConfig): SGD  w -= lr * g;  Adagrad  acc += g * g, w -= lr * g / sqrt(acc + eps),
// with acc the first `dim` optimizer floats (Adagrad requires optimizer_floats >= dim). A key
// repeated in one Accumulate is updated once per occurrence, in order.
//
// Order: Get returns rows in input order; Drain returns shard by shard, each in slot order. No
// result depends on hashing order, so a run is deterministic.
//
// Errors: CheckHbmConfig holds the config rules (cheap, builds nothing); CpuHbmTable::Create and
// HbmTable::Create return InvalidInput for a config that breaks them. Every operation returns a
// Status (a device backend can fail mid-operation; the CPU one fails only on rows or gradients
// that do not match the layout, changing nothing). Nothing throws.
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
#include "paramserver/partitioner.hpp"
#include "paramserver/types.hpp"

namespace troupe::paramserver {

enum class OptimizerKind { kSgd, kAdagrad };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kAdagrad;
  float learning_rate = 0.05f;
  float epsilon = 1e-8f;  // Adagrad only
};

// The update rule applied to one full row given one gradient row.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // row: layout.floats() floats; gradient: layout.dim floats.
  virtual void Apply(std::span<float> row, std::span<const float> gradient) const = 0;
};

// InvalidInput if `layout` has no room for the optimizer's state.
StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer(const OptimizerConfig& config,
                                                   const ValueLayout& layout);

enum class HbmBackendKind { kCpu, kCuda };

struct HbmConfig {
  ValueLayout layout;
  int32_t nodes = 1;
  int32_t gpus_per_node = 1;
  size_t bytes_per_gpu = size_t{1} << 30;
  OptimizerConfig optimizer;
  HbmBackendKind backend = HbmBackendKind::kCpu;
};

// The rules every backend applies to its config: a valid layout, nodes and gpus_per_node >= 1, a
// shard budget of fewer rows than a 32-bit slot index holds, room for the optimizer's state.
// InvalidInput naming the rule broken.
Status CheckHbmConfig(const HbmConfig& config);

struct InsertResult {
  size_t inserted = 0;        // new keys
  size_t overwritten = 0;     // keys already present
  std::vector<Key> rejected;  // keys whose shard was full, in input order
};

// Which floats of a row Get returns.
enum class RowPart { kFull, kEmbedding };

// What every backend's Get and Insert share. Keys whose flag is 0, in input order.
std::vector<Key> Unflagged(std::span<const Key> keys, const std::vector<uint8_t>& flags);
// The end of a Get that wrote each found key's row at the key's input position in out->values
// (`width` floats a row; flags[i] set where keys[i] was found, `found` of them): the found rows
// move to the front in input order, out is cut to them, and the keys not found are returned.
std::vector<Key> KeepFoundRows(std::span<const Key> keys, const std::vector<uint8_t>& flags,
                               size_t found, size_t width, RowBatch* out);

class HbmBackend {
 public:
  virtual ~HbmBackend() = default;

  // rows: full rows. InvalidInput (nothing inserted) if the values do not match the layout.
  virtual StatusOr<InsertResult> Insert(const RowBatch& rows) = 0;
  // Sets *out to the rows of the present keys, in input order (full rows, or the embedding only).
  // Returns the absent keys, in input order.
  virtual StatusOr<std::vector<Key>> Get(std::span<const Key> keys, RowBatch* out,
                                         RowPart part = RowPart::kFull) = 0;
  // gradients: keys.size() * dim floats (else InvalidInput, nothing updated). Returns the absent
  // keys (not updated), in input order.
  virtual StatusOr<std::vector<Key>> Accumulate(std::span<const Key> keys,
                                                std::span<const float> gradients) = 0;
  // Removes the keys present; returns how many were.
  virtual StatusOr<size_t> Erase(std::span<const Key> keys) = 0;
  // Every row (full), removed from the table: MEM-PS's write-back.
  virtual StatusOr<RowBatch> Drain() = 0;

  virtual size_t size() const = 0;
  virtual size_t shard_rows(int32_t gpu) const = 0;
  virtual size_t shard_bytes_used(int32_t gpu) const = 0;
};

class CpuHbmTable final : public HbmBackend {
 public:
  static size_t RowCost(const ValueLayout& layout) { return sizeof(Key) + layout.bytes(); }

  // InvalidInput on a config CheckHbmConfig rejects.
  static StatusOr<std::unique_ptr<CpuHbmTable>> Create(const HbmConfig& config);

  StatusOr<InsertResult> Insert(const RowBatch& rows) override;
  StatusOr<std::vector<Key>> Get(std::span<const Key> keys, RowBatch* out,
                                 RowPart part = RowPart::kFull) override;
  StatusOr<std::vector<Key>> Accumulate(std::span<const Key> keys,
                                        std::span<const float> gradients) override;
  StatusOr<size_t> Erase(std::span<const Key> keys) override;
  StatusOr<RowBatch> Drain() override;

  size_t size() const override;
  size_t shard_rows(int32_t gpu) const override { return shards_.at(gpu).index.size(); }
  size_t shard_bytes_used(int32_t gpu) const override {
    return shard_rows(gpu) * RowCost(config_.layout);
  }
  size_t shard_capacity_rows() const { return capacity_; }

 private:
  // One GPU's table: key -> slot, rows in one arena, freed slots reused.
  struct Shard {
    absl::flat_hash_map<Key, uint32_t> index;
    std::vector<float> arena;     // row of slot s at s * width
    std::vector<Key> slot_keys;   // key of each slot (for Drain)
    std::vector<uint8_t> in_use;  // per slot
    std::vector<uint32_t> free_slots;
  };

  CpuHbmTable(const HbmConfig& config, std::unique_ptr<Optimizer> optimizer);

  // Batched lookups run in two passes, slots then rows, each prefetching this far ahead.
  static constexpr size_t kPrefetchDistance = 8;
  static constexpr uint32_t kAbsent = ~uint32_t{0};

  float* RowOf(Shard& shard, uint32_t slot) { return shard.arena.data() + slot * width_; }
  // Partitions `keys` by owner GPU into partition_ (the config was checked: it cannot fail).
  void PartitionKeys(std::span<const Key> keys);
  // slots_[j] = the slot of keys[j] in `shard`, or kAbsent.
  void FindSlots(const Shard& shard, std::span<const Key> keys);
  void PrefetchRow(const Shard& shard, size_t j) const;
  // Slot for a new key in `shard`, or -1 if the shard is full.
  int64_t AllocateSlot(Shard& shard);

  HbmConfig config_;
  size_t width_;
  size_t capacity_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<Shard> shards_;
  // Per-call scratch, kept to reuse its capacity.
  Partition partition_;
  std::vector<uint32_t> slots_;
  std::vector<uint8_t> found_;
};

// One node's HBM-PS over a backend. Create builds the CPU backend; paramserver/ cannot build the
// CUDA one (gpu/ depends on paramserver/, not the other way), so kCuda is InvalidInput there and a
// caller that links gpu/ passes gpu::MakeCudaHbmTable's backend to the constructor instead.
class HbmTable {
 public:
  static StatusOr<HbmTable> Create(const HbmConfig& config);
  explicit HbmTable(std::unique_ptr<HbmBackend> backend) : backend_(std::move(backend)) {}

  StatusOr<InsertResult> Insert(const RowBatch& rows) { return backend_->Insert(rows); }
  StatusOr<std::vector<Key>> Get(std::span<const Key> keys, RowBatch* out,
                                 RowPart part = RowPart::kFull) {
    return backend_->Get(keys, out, part);
  }
  StatusOr<std::vector<Key>> Accumulate(std::span<const Key> keys,
                                        std::span<const float> gradients) {
    return backend_->Accumulate(keys, gradients);
  }
  StatusOr<size_t> Erase(std::span<const Key> keys) { return backend_->Erase(keys); }
  StatusOr<RowBatch> Drain() { return backend_->Drain(); }
  size_t size() const { return backend_->size(); }
  HbmBackend& backend() { return *backend_; }

 private:
  std::unique_ptr<HbmBackend> backend_;
};

}  // namespace troupe::paramserver
