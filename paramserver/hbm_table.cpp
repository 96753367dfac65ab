#include "paramserver/hbm_table.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "base/status_macros.hpp"

namespace troupe::paramserver {
namespace {

class SgdOptimizer final : public Optimizer {
 public:
  explicit SgdOptimizer(float learning_rate) : lr_(learning_rate) {}
  void Apply(std::span<float> row, std::span<const float> gradient) const override {
    for (size_t f = 0; f < gradient.size(); ++f) row[f] -= lr_ * gradient[f];
  }

 private:
  float lr_;
};

class AdagradOptimizer final : public Optimizer {
 public:
  AdagradOptimizer(float learning_rate, float epsilon) : lr_(learning_rate), eps_(epsilon) {}
  void Apply(std::span<float> row, std::span<const float> gradient) const override {
    const size_t dim = gradient.size();
    float* acc = row.data() + dim;
    for (size_t f = 0; f < dim; ++f) {
      acc[f] += gradient[f] * gradient[f];
      row[f] -= lr_ * gradient[f] / std::sqrt(acc[f] + eps_);
    }
  }

 private:
  float lr_;
  float eps_;
};

}  // namespace

std::vector<Key> Unflagged(std::span<const Key> keys, const std::vector<uint8_t>& flags) {
  std::vector<Key> out;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!flags[i]) out.push_back(keys[i]);
  }
  return out;
}

std::vector<Key> KeepFoundRows(std::span<const Key> keys, const std::vector<uint8_t>& flags,
                               size_t found, size_t width, RowBatch* out) {
  if (found == keys.size()) return {};
  size_t kept = 0;  // compact the present rows, keeping input order
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!flags[i]) continue;
    out->keys[kept] = keys[i];
    if (kept != i) {
      std::copy_n(out->values.data() + i * width, width, out->values.data() + kept * width);
    }
    ++kept;
  }
  out->keys.resize(kept);
  out->values.resize(kept * width);
  return Unflagged(keys, flags);
}

StatusOr<std::unique_ptr<Optimizer>> MakeOptimizer(const OptimizerConfig& config,
                                                   const ValueLayout& layout) {
  switch (config.kind) {
    case OptimizerKind::kSgd:
      return std::unique_ptr<Optimizer>(std::make_unique<SgdOptimizer>(config.learning_rate));
    case OptimizerKind::kAdagrad:
      if (layout.optimizer_floats < layout.dim) {
        return Status::InvalidInput("Adagrad needs optimizer_floats >= dim");
      }
      return std::unique_ptr<Optimizer>(
          std::make_unique<AdagradOptimizer>(config.learning_rate, config.epsilon));
  }
  return Status::InvalidInput("unknown optimizer");
}

Status CheckHbmConfig(const HbmConfig& config) {
  if (!config.layout.valid()) return Status::InvalidInput("HBM-PS: bad value layout");
  if (config.nodes < 1 || config.gpus_per_node < 1) {
    return Status::InvalidInput("HBM-PS: nodes and gpus_per_node must be >= 1");
  }
  if (config.bytes_per_gpu / CpuHbmTable::RowCost(config.layout) >=
      std::numeric_limits<uint32_t>::max()) {
    return Status::InvalidInput("HBM-PS: a shard's budget holds too many rows");
  }
  return MakeOptimizer(config.optimizer, config.layout).status();
}

StatusOr<std::unique_ptr<CpuHbmTable>> CpuHbmTable::Create(const HbmConfig& config) {
  RETURN_IF_ERROR(CheckHbmConfig(config));
  ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> optimizer,
                   MakeOptimizer(config.optimizer, config.layout));
  return std::unique_ptr<CpuHbmTable>(new CpuHbmTable(config, std::move(optimizer)));
}

CpuHbmTable::CpuHbmTable(const HbmConfig& config, std::unique_ptr<Optimizer> optimizer)
    : config_(config),
      width_(static_cast<size_t>(config.layout.floats())),
      capacity_(config.bytes_per_gpu / RowCost(config.layout)),
      optimizer_(std::move(optimizer)) {
  shards_.resize(static_cast<size_t>(config_.gpus_per_node));
}

void CpuHbmTable::PartitionKeys(std::span<const Key> keys) {
  // CheckHbmConfig made nodes and gpus_per_node >= 1, the only way this can fail.
  const Status s = PartitionByGpuInto(keys, config_.nodes, config_.gpus_per_node, &partition_);
  assert(s.ok());
  (void)s;
}

int64_t CpuHbmTable::AllocateSlot(Shard& shard) {
  if (shard.index.size() >= capacity_) return -1;
  if (!shard.free_slots.empty()) {
    const uint32_t slot = shard.free_slots.back();
    shard.free_slots.pop_back();
    return slot;
  }
  const auto slot = static_cast<uint32_t>(shard.slot_keys.size());
  shard.slot_keys.push_back(0);
  shard.in_use.push_back(0);
  shard.arena.resize(shard.arena.size() + width_);
  return slot;
}

StatusOr<InsertResult> CpuHbmTable::Insert(const RowBatch& rows) {
  if (rows.values.size() != rows.keys.size() * width_) {
    return Status::InvalidInput("CpuHbmTable::Insert: rows do not match the layout");
  }
  PartitionKeys(rows.keys);
  InsertResult result;
  found_.assign(rows.keys.size(), 1);  // cleared for the rows that do not fit
  for (size_t p = 0; p < shards_.size(); ++p) {
    Shard& shard = shards_[p];
    for (size_t j = 0; j < partition_.keys[p].size(); ++j) {
      const Key key = partition_.keys[p][j];
      const uint32_t position = partition_.positions[p][j];
      uint32_t slot;
      if (const auto it = shard.index.find(key); it != shard.index.end()) {
        slot = it->second;
        ++result.overwritten;
      } else if (const int64_t fresh = AllocateSlot(shard); fresh >= 0) {
        slot = static_cast<uint32_t>(fresh);
        shard.index.emplace(key, slot);
        shard.slot_keys[slot] = key;
        shard.in_use[slot] = 1;
        ++result.inserted;
      } else {
        found_[position] = 0;
        continue;
      }
      std::copy_n(rows.values.data() + position * width_, width_, RowOf(shard, slot));
    }
  }
  result.rejected = Unflagged(rows.keys, found_);
  return result;
}

void CpuHbmTable::FindSlots(const Shard& shard, std::span<const Key> keys) {
  slots_.resize(keys.size());
  for (size_t j = 0; j < keys.size(); ++j) {
    if (j + kPrefetchDistance < keys.size()) shard.index.prefetch(keys[j + kPrefetchDistance]);
    const auto it = shard.index.find(keys[j]);
    slots_[j] = it == shard.index.end() ? kAbsent : it->second;
  }
}

void CpuHbmTable::PrefetchRow(const Shard& shard, size_t j) const {
  if (j < slots_.size() && slots_[j] != kAbsent) {
    __builtin_prefetch(shard.arena.data() + slots_[j] * width_, 1);
  }
}

StatusOr<std::vector<Key>> CpuHbmTable::Get(std::span<const Key> keys, RowBatch* out,
                                            RowPart part) {
  const size_t out_width =
      part == RowPart::kFull ? width_ : static_cast<size_t>(config_.layout.dim);
  PartitionKeys(keys);
  out->keys.assign(keys.begin(), keys.end());
  out->values.resize(keys.size() * out_width);
  found_.assign(keys.size(), 0);
  size_t found_count = 0;
  for (size_t p = 0; p < shards_.size(); ++p) {
    Shard& shard = shards_[p];
    FindSlots(shard, partition_.keys[p]);
    for (size_t j = 0; j < slots_.size(); ++j) {
      PrefetchRow(shard, j + kPrefetchDistance);
      if (slots_[j] == kAbsent) continue;
      const uint32_t position = partition_.positions[p][j];
      std::copy_n(RowOf(shard, slots_[j]), out_width, out->values.data() + position * out_width);
      found_[position] = 1;
      ++found_count;
    }
  }
  return KeepFoundRows(keys, found_, found_count, out_width, out);
}

StatusOr<std::vector<Key>> CpuHbmTable::Accumulate(std::span<const Key> keys,
                                                   std::span<const float> gradients) {
  const auto dim = static_cast<size_t>(config_.layout.dim);
  if (gradients.size() != keys.size() * dim) {
    return Status::InvalidInput("CpuHbmTable::Accumulate: gradients do not match the keys");
  }
  PartitionKeys(keys);
  found_.assign(keys.size(), 0);
  size_t found_count = 0;
  for (size_t p = 0; p < shards_.size(); ++p) {
    Shard& shard = shards_[p];
    FindSlots(shard, partition_.keys[p]);
    for (size_t j = 0; j < slots_.size(); ++j) {
      PrefetchRow(shard, j + kPrefetchDistance);
      if (slots_[j] == kAbsent) continue;
      const uint32_t position = partition_.positions[p][j];
      optimizer_->Apply({RowOf(shard, slots_[j]), width_}, gradients.subspan(position * dim, dim));
      found_[position] = 1;
      ++found_count;
    }
  }
  if (found_count == keys.size()) return std::vector<Key>{};
  return Unflagged(keys, found_);
}

StatusOr<size_t> CpuHbmTable::Erase(std::span<const Key> keys) {
  PartitionKeys(keys);
  size_t erased = 0;
  for (size_t p = 0; p < shards_.size(); ++p) {
    Shard& shard = shards_[p];
    for (const Key key : partition_.keys[p]) {
      const auto it = shard.index.find(key);
      if (it == shard.index.end()) continue;
      shard.in_use[it->second] = 0;
      shard.free_slots.push_back(it->second);
      shard.index.erase(it);
      ++erased;
    }
  }
  return erased;
}

StatusOr<RowBatch> CpuHbmTable::Drain() {
  RowBatch out;
  out.keys.reserve(size());
  out.values.reserve(size() * width_);
  for (Shard& shard : shards_) {
    for (uint32_t slot = 0; slot < shard.slot_keys.size(); ++slot) {
      if (!shard.in_use[slot]) continue;
      out.keys.push_back(shard.slot_keys[slot]);
      const float* row = RowOf(shard, slot);
      out.values.insert(out.values.end(), row, row + width_);
    }
    shard = Shard{};
  }
  return out;
}

size_t CpuHbmTable::size() const {
  size_t rows = 0;
  for (const Shard& shard : shards_) rows += shard.index.size();
  return rows;
}

StatusOr<HbmTable> HbmTable::Create(const HbmConfig& config) {
  switch (config.backend) {
    case HbmBackendKind::kCpu: {
      ASSIGN_OR_RETURN(std::unique_ptr<CpuHbmTable> cpu, CpuHbmTable::Create(config));
      return HbmTable(std::move(cpu));
    }
    case HbmBackendKind::kCuda:
      return Status::InvalidInput("HbmTable: the CUDA backend comes from gpu::MakeCudaHbmTable");
  }
  return Status::InvalidInput("HbmTable: unknown backend");
}

}  // namespace troupe::paramserver
