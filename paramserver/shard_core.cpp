#include "paramserver/shard_core.hpp"

#include <algorithm>

#include "base/status_macros.hpp"

namespace troupe {

using paramserver::Key;
using paramserver::RowBatch;

namespace {

std::string ShardName(int32_t shard) { return "shard " + std::to_string(shard); }

}  // namespace

Status ShardCore::Open(const PsOptions& options, int32_t shard, const std::string& dir,
                       std::unique_ptr<ShardCore>* out) {
  std::unique_ptr<ShardCore> core(new ShardCore(options, shard));
  core->layout_ = paramserver::EmbeddingLayout(options.model);
  paramserver::SsdStoreOptions ssd;
  ssd.file_bytes = static_cast<uint64_t>(options.ssd_file_bytes);
  ssd.layout = core->layout_;
  ssd.compaction_threshold = static_cast<uint64_t>(options.ssd_compaction_threshold);
  ssd.sync = options.ssd_sync;
  core->write_fault_ = std::make_unique<paramserver::SsdWriteFault>();
  ssd.write_fault = core->write_fault_.get();
  ssd.owner = paramserver::ssd::StoreIdentity{options.ssd_run_id, static_cast<uint64_t>(shard)};
  RETURN_IF_ERROR(paramserver::SsdStore::Open(dir, ssd, &core->ssd_));
  core->recovery_bytes_ = static_cast<int64_t>(core->ssd_->recovery_bytes());
  core->backing_ = std::make_unique<SsdBackingStore>(core->ssd_.get(), core->layout_);
  paramserver::HbmConfig hbm;
  hbm.layout = core->layout_;
  hbm.nodes = options.nodes;
  hbm.gpus_per_node = options.gpus_per_node;
  hbm.bytes_per_gpu = static_cast<size_t>(options.hbm_bytes_per_gpu);
  core->hbm_rows_per_gpu_ = hbm.bytes_per_gpu / paramserver::CpuHbmTable::RowCost(core->layout_);
  const paramserver::MemCacheConfig mem{core->layout_,
                                        static_cast<size_t>(options.mem_bytes_per_node), 8};
  auto cache = paramserver::MemCache::Create(mem, core->backing_.get());
  if (!cache.ok()) return Status::InvalidInput(ShardName(shard) + ": " + cache.status().message());
  core->mem_ = std::move(*cache);
  if (options.hbm_device) {
    std::unique_ptr<paramserver::HbmBackend> device;
    if (Status s = options.hbm_device(hbm, &device); !s.ok()) {
      return s.code() == Status::Code::kInvalidInput
                 ? Status::InvalidInput(ShardName(shard) + ": " + s.message())
                 : Status::Internal(ShardName(shard) +
                                    ": paramserver.hbm_backend \"cuda\": " + s.message());
    }
    core->hbm_ = std::make_unique<paramserver::HbmTable>(std::move(device));
  } else {
    StatusOr<paramserver::HbmTable> table = paramserver::HbmTable::Create(hbm);
    if (!table.ok()) {
      return Status::InvalidInput(ShardName(shard) + ": " + table.status().message());
    }
    core->hbm_ = std::make_unique<paramserver::HbmTable>(std::move(*table));
  }
  *out = std::move(core);
  return Status::Ok();
}

bool ShardCore::Fits(std::span<const Key> keys) const {
  std::vector<size_t> extra(static_cast<size_t>(options_.gpus_per_node), 0);
  for (const Key key : keys) {
    if (!pinned_.contains(key))
      ++extra[paramserver::GpuOf(key, options_.nodes, options_.gpus_per_node)];
  }
  auto& backend = hbm_->backend();
  for (int32_t g = 0; g < options_.gpus_per_node; ++g) {
    if (backend.shard_rows(g) + extra[g] > hbm_rows_per_gpu_) return false;
  }
  return true;
}

Status ShardCore::Prepare(int64_t step, std::span<const Key> keys, PrepareStats* stats) {
  std::vector<Key> fresh;
  std::vector<Key>& pinned_by_step = step_keys_[step];
  for (const Key key : keys) {
    const auto [it, inserted] = pinned_.try_emplace(key, step);
    if (inserted) {
      fresh.push_back(key);
      pinned_by_step.push_back(key);
      continue;
    }
    ++stats->hbm_hits;
    if (it->second != step) {  // pinned by an earlier step: now also by this one
      it->second = step;
      pinned_by_step.push_back(key);
    }
  }
  stats->keys += static_cast<int64_t>(keys.size());
  const SsdCounters before = backing_->counters();
  RowBatch rows;
  paramserver::FetchStats fetch;
  RETURN_IF_ERROR(mem_->Fetch(fresh, &rows, &fetch));
  const SsdCounters& after = backing_->counters();
  stats->mem_keys += static_cast<int64_t>(fresh.size());
  stats->mem_hits += static_cast<int64_t>(fetch.hits);
  stats->ssd_rows_read += after.rows_read - before.rows_read;
  stats->rows_created += after.rows_created - before.rows_created;
  stats->ssd_bytes_read += after.bytes_read - before.bytes_read;
  stats->ssd_bytes_written += after.bytes_written - before.bytes_written;
  ASSIGN_OR_RETURN(const paramserver::InsertResult inserted, hbm_->Insert(rows));
  if (!inserted.rejected.empty()) {
    return Status::InvalidInput(ShardName(shard_) + ": HBM-PS is full (" +
                                std::to_string(inserted.rejected.size()) + " rows rejected)");
  }
  return Status::Ok();
}

Status ShardCore::Pull(std::span<const Key> keys, RowBatch* out) {
  ASSIGN_OR_RETURN(const std::vector<Key> absent,
                   hbm_->Get(keys, out, paramserver::RowPart::kEmbedding));
  if (!absent.empty()) {
    return Status::InvalidInput(ShardName(shard_) + ": pulled key " +
                                std::to_string(absent.front()) + " is not in HBM-PS");
  }
  return Status::Ok();
}

Status ShardCore::Apply(int64_t step, std::span<const GradientPart> parts, ApplyStats* stats) {
  const auto found = step_keys_.find(step);
  const std::vector<Key> keys = found == step_keys_.end() ? std::vector<Key>{} : found->second;
  if (found != step_keys_.end()) step_keys_.erase(found);
  const auto dim = static_cast<size_t>(options_.model.dim);
  absl::flat_hash_map<Key, uint32_t> index;
  for (size_t i = 0; i < keys.size(); ++i) index.emplace(keys[i], static_cast<uint32_t>(i));
  std::vector<float> sums(keys.size() * dim, 0.0f);
  for (const GradientPart& part : parts) {  // node order: every shard sums identically
    for (size_t j = 0; j < part.keys.size(); ++j) {
      const auto it = index.find(part.keys[j]);
      if (it == index.end()) {
        return Status::InvalidInput(ShardName(shard_) + ": gradient for key " +
                                    std::to_string(part.keys[j]) + " not prepared in step " +
                                    std::to_string(step));
      }
      float* sum = sums.data() + it->second * dim;
      const float* g = part.gradients.data() + j * dim;
      for (size_t k = 0; k < dim; ++k) sum[k] += g[k];
    }
  }
  RowBatch rows;
  ASSIGN_OR_RETURN(const std::vector<Key> absent, hbm_->Get(keys, &rows));
  if (!absent.empty()) {
    return Status::InvalidInput(ShardName(shard_) + ": a key of step " + std::to_string(step) +
                                " left HBM-PS before its update");
  }
  const paramserver::CtrModelConfig& model = options_.model;
  for (size_t i = 0; i < keys.size(); ++i) {
    paramserver::ApplyAdagrad(rows.row(i, layout_), {sums.data() + i * dim, dim},
                              model.lr_embedding, model.eps, model.dim);
  }
  // Overwrites: every key is present, so nothing is rejected.
  RETURN_IF_ERROR(hbm_->Insert(rows).status());
  RowBatch released;
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto it = pinned_.find(keys[i]);
    if (it->second != step) continue;  // a later step in flight still uses it
    pinned_.erase(it);
    released.keys.push_back(keys[i]);
    const auto row = rows.row(i, layout_);
    released.values.insert(released.values.end(), row.begin(), row.end());
  }
  RETURN_IF_ERROR(hbm_->Erase(released.keys).status());
  stats->rows_released = static_cast<int64_t>(released.size());
  const int64_t written_before = backing_->counters().bytes_written;
  if (options_.durable_updates) {
    // Write-through before anything acknowledges the step: every row it updated, tagged.
    RETURN_IF_ERROR(backing_->StoreTagged(rows, static_cast<uint64_t>(step) + 1));
  }
  RETURN_IF_ERROR(mem_->Update(released, nullptr, options_.durable_updates));
  stats->ssd_bytes_written = backing_->counters().bytes_written - written_before;
  if (blocked()) return Status::Ok();  // compaction waits for the writes to succeed
  return Compact(stats);
}

Status ShardCore::Compact(ApplyStats* stats) {
  paramserver::CompactionStats compaction;
  bool compacted = false;
  compaction_error_ = ssd_->MaybeCompact(&compacted, &compaction);
  if (!compaction_error_.ok()) {
    // The store is as before the compaction: only the space is not reclaimed yet.
    if (compaction_error_.code() != Status::Code::kIoError) return compaction_error_;
    return Status::Ok();
  }
  if (stats != nullptr) {
    stats->compacted = compacted;
    stats->compaction_bytes = compaction.bytes_read + compaction.bytes_written;
  }
  compactions_ += compacted ? 1 : 0;
  return Status::Ok();
}

const Status& ShardCore::WriteError() const {
  return backing_->blocked() ? backing_->write_error() : compaction_error_;
}

Status ShardCore::RetryWrites() {
  if (backing_->blocked()) {
    RETURN_IF_ERROR(backing_->Flush());
  }
  if (!compaction_error_.ok()) {
    RETURN_IF_ERROR(Compact(nullptr));
    return compaction_error_;
  }
  return Status::Ok();
}

Status ShardCore::FlushMem() { return mem_->Flush(); }

Status ShardCore::Final(RowBatch* out) {
  if (!pinned_.empty()) {
    return Status::InvalidInput(ShardName(shard_) + ": " + std::to_string(pinned_.size()) +
                                " rows still pinned in HBM-PS at the end");
  }
  RETURN_IF_ERROR(mem_->Flush());
  if (blocked()) return WriteError();
  const std::vector<Key> keys = backing_->KnownKeys();
  paramserver::GetStats stats;
  RETURN_IF_ERROR(ssd_->Get(keys, out, &stats));
  if (out->keys.size() != keys.size()) {
    return Status::Corrupt(ShardName(shard_) + ": " + std::to_string(stats.keys_missing) +
                           " stored keys missing from SSD-PS");
  }
  return Status::Ok();
}

}  // namespace troupe
