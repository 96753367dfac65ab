// CudaHbmTable (gpu/cuda_hbm_table.hpp) over one DeviceHashShard per GPU: part of the CUDA
// backends plugin, reached through cuda_impl::MakeHbmTable.
#include <cuda_runtime.h>

#include <cassert>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "base/status_macros.hpp"
#include "gpu/cuda/cuda_impl.hpp"
#include "gpu/cuda/device_hash_shard.hpp"
#include "paramserver/hbm_table.hpp"
#include "paramserver/partitioner.hpp"

namespace troupe::gpu {
namespace {

using paramserver::CpuHbmTable;
using paramserver::HbmConfig;
using paramserver::InsertResult;
using paramserver::Key;
using paramserver::RowBatch;
using paramserver::RowPart;
using paramserver::Unflagged;

// A device call's error, named as this table's.
Status Device(const Status& status) {
  return status.ok() ? status : Status::Internal("CudaHbmTable: " + status.message());
}

bool Reserved(Key key) { return key == kEmptyKey || key == kErasedKey; }

class CudaHbmTable final : public paramserver::HbmBackend {
 public:
  CudaHbmTable(const HbmConfig& config, std::vector<std::unique_ptr<DeviceHashShard>> shards,
               size_t capacity)
      : config_(config),
        width_(static_cast<size_t>(config.layout.floats())),
        capacity_(capacity),
        shards_(std::move(shards)) {}

  StatusOr<InsertResult> Insert(const RowBatch& rows) override {
    if (rows.values.size() != rows.keys.size() * width_) {
      return Status::InvalidInput("CudaHbmTable::Insert: rows do not match the layout");
    }
    Partition(rows.keys);
    InsertResult result;
    flags_.assign(rows.keys.size(), 1);  // cleared for the rows that do not fit
    for (size_t p = 0; p < shards_.size(); ++p) {
      DeviceHashShard& shard = *shards_[p];
      const std::vector<Key>& keys = partition_.keys[p];
      const std::vector<uint32_t>& positions = partition_.positions[p];
      // The rows that fit, in input order: all of them unless the batch could overflow.
      std::vector<uint8_t> admit(keys.size(), 1);
      for (size_t j = 0; j < keys.size(); ++j) admit[j] = !Reserved(keys[j]);
      if (shard.size() + keys.size() > capacity_) {
        RETURN_IF_ERROR(AdmitWithinBudget(shard, keys, &admit));
      }
      std::vector<Key> part_keys;
      std::vector<float> part_rows;
      for (size_t j = 0; j < keys.size(); ++j) {
        if (!admit[j]) {
          flags_[positions[j]] = 0;
          continue;
        }
        part_keys.push_back(keys[j]);
        const float* row = rows.values.data() + positions[j] * width_;
        part_rows.insert(part_rows.end(), row, row + width_);
      }
      if (shard.used_slots() > shard.size() &&
          4 * (shard.used_slots() + part_keys.size()) > 3 * shard.slots()) {
        RETURN_IF_ERROR(Device(shard.Rebuild()));
      }
      size_t inserted = 0, overwritten = 0;
      RETURN_IF_ERROR(Device(shard.Insert(part_keys.data(), part_rows.data(), part_keys.size(),
                                          &inserted, &overwritten)));
      result.inserted += inserted;
      result.overwritten += overwritten;
    }
    result.rejected = Unflagged(rows.keys, flags_);
    return result;
  }

  StatusOr<std::vector<Key>> Get(std::span<const Key> keys, RowBatch* out, RowPart part) override {
    const size_t out_width =
        part == RowPart::kFull ? width_ : static_cast<size_t>(config_.layout.dim);
    Partition(keys);
    out->keys.assign(keys.begin(), keys.end());
    out->values.assign(keys.size() * out_width, 0.0f);
    flags_.assign(keys.size(), 0);
    size_t found_count = 0;
    for (size_t p = 0; p < shards_.size(); ++p) {
      const std::vector<Key>& part_keys = partition_.keys[p];
      std::vector<float> rows(part_keys.size() * out_width);
      std::vector<uint8_t> found(part_keys.size());
      RETURN_IF_ERROR(
          Device(shards_[p]->Find(part_keys.data(), part_keys.size(),
                                  static_cast<int32_t>(out_width), rows.data(), found.data())));
      for (size_t j = 0; j < part_keys.size(); ++j) {
        if (!found[j]) continue;
        const uint32_t position = partition_.positions[p][j];
        std::copy_n(rows.data() + j * out_width, out_width,
                    out->values.data() + position * out_width);
        flags_[position] = 1;
        ++found_count;
      }
    }
    return paramserver::KeepFoundRows(keys, flags_, found_count, out_width, out);
  }

  StatusOr<std::vector<Key>> Accumulate(std::span<const Key> keys,
                                        std::span<const float> gradients) override {
    const auto dim = static_cast<size_t>(config_.layout.dim);
    if (gradients.size() != keys.size() * dim) {
      return Status::InvalidInput("CudaHbmTable::Accumulate: gradients do not match the keys");
    }
    Partition(keys);
    flags_.assign(keys.size(), 0);
    for (size_t p = 0; p < shards_.size(); ++p) {
      const std::vector<Key>& part_keys = partition_.keys[p];
      std::vector<float> part_gradients;
      part_gradients.reserve(part_keys.size() * dim);
      for (const uint32_t position : partition_.positions[p]) {
        const float* g = gradients.data() + position * dim;
        part_gradients.insert(part_gradients.end(), g, g + dim);
      }
      std::vector<uint8_t> found(part_keys.size());
      RETURN_IF_ERROR(Device(shards_[p]->Accumulate(part_keys.data(), part_gradients.data(),
                                                    part_keys.size(), found.data())));
      for (size_t j = 0; j < part_keys.size(); ++j) {
        if (found[j]) flags_[partition_.positions[p][j]] = 1;
      }
    }
    return Unflagged(keys, flags_);
  }

  StatusOr<size_t> Erase(std::span<const Key> keys) override {
    Partition(keys);
    size_t erased = 0;
    for (size_t p = 0; p < shards_.size(); ++p) {
      size_t part_erased = 0;
      RETURN_IF_ERROR(Device(
          shards_[p]->Erase(partition_.keys[p].data(), partition_.keys[p].size(), &part_erased)));
      erased += part_erased;
    }
    return erased;
  }

  StatusOr<RowBatch> Drain() override {
    RowBatch out;
    for (auto& shard : shards_) {
      std::vector<Key> keys;
      std::vector<float> rows;
      RETURN_IF_ERROR(Device(shard->Drain(&keys, &rows)));
      out.keys.insert(out.keys.end(), keys.begin(), keys.end());
      out.values.insert(out.values.end(), rows.begin(), rows.end());
    }
    return out;
  }

  size_t size() const override {
    size_t rows = 0;
    for (const auto& shard : shards_) rows += shard->size();
    return rows;
  }
  size_t shard_rows(int32_t gpu) const override { return shards_.at(gpu)->size(); }
  size_t shard_bytes_used(int32_t gpu) const override {
    return shard_rows(gpu) * CpuHbmTable::RowCost(config_.layout);
  }

 private:
  void Partition(std::span<const Key> keys) {
    // MakeCudaHbmTable checked the config (nodes, gpus_per_node >= 1): this cannot fail.
    const Status s =
        paramserver::PartitionByGpuInto(keys, config_.nodes, config_.gpus_per_node, &partition_);
    assert(s.ok());
    (void)s;
  }

  // Clears admit[j] for the new keys past the shard's budget, counting each distinct new key
  // once, in input order — CpuHbmTable's rule. Present keys (overwrites) always fit.
  Status AdmitWithinBudget(DeviceHashShard& shard, const std::vector<Key>& keys,
                           std::vector<uint8_t>* admit) {
    std::vector<float> rows(keys.size());  // first float of each row: unused, Find needs room
    std::vector<uint8_t> present(keys.size());
    RETURN_IF_ERROR(Device(shard.Find(keys.data(), keys.size(), 1, rows.data(), present.data())));
    const size_t room = capacity_ - shard.size();
    absl::flat_hash_set<Key> admitted_new;
    for (size_t j = 0; j < keys.size(); ++j) {
      if (!(*admit)[j] || present[j] || admitted_new.contains(keys[j])) continue;
      if (admitted_new.size() < room) {
        admitted_new.insert(keys[j]);
      } else {
        (*admit)[j] = 0;
      }
    }
    return Status::Ok();
  }

  HbmConfig config_;
  size_t width_;
  size_t capacity_;
  std::vector<std::unique_ptr<DeviceHashShard>> shards_;
  paramserver::Partition partition_;
  std::vector<uint8_t> flags_;
};

}  // namespace

Status cuda_impl::MakeHbmTable(const paramserver::HbmConfig& config,
                               std::unique_ptr<paramserver::HbmBackend>* out) {
  // paramserver's CheckHbmConfig is the one place the config rules live.
  if (Status s = paramserver::CheckHbmConfig(config); !s.ok()) {
    return Status::InvalidInput("HBM-PS config: " + s.message());
  }
  int gpus = 0;
  const cudaError_t err = cudaGetDeviceCount(&gpus);
  if (err != cudaSuccess || gpus == 0) {
    return Status::Internal(std::string("cuda HBM-PS: no usable GPU (") +
                            (err != cudaSuccess ? cudaGetErrorString(err) : "none found") + ")");
  }
  const size_t capacity = config.bytes_per_gpu / CpuHbmTable::RowCost(config.layout);
  const ShardOptimizer optimizer{config.optimizer.kind == paramserver::OptimizerKind::kAdagrad,
                                 config.optimizer.learning_rate, config.optimizer.epsilon};
  std::vector<std::unique_ptr<DeviceHashShard>> shards(static_cast<size_t>(config.gpus_per_node));
  for (size_t g = 0; g < shards.size(); ++g) {
    RETURN_IF_ERROR(DeviceHashShard::Create(static_cast<int>(g) % gpus, capacity, config.layout.dim,
                                            config.layout.floats(), optimizer, &shards[g]));
  }
  *out = std::make_unique<CudaHbmTable>(config, std::move(shards), capacity);
  return Status::Ok();
}

}  // namespace troupe::gpu
