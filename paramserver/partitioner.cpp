#include "paramserver/partitioner.hpp"

#include <algorithm>

#include "base/status_macros.hpp"

namespace troupe::paramserver {
namespace {

void CopyRow(const float* from, float* to, int32_t floats) {
  std::copy_n(from, static_cast<size_t>(floats), to);
}

template <typename OwnerFn>
void PartitionInto(std::span<const Key> keys, size_t parts, OwnerFn owner, Partition* out) {
  out->keys.resize(parts);
  out->positions.resize(parts);
  for (size_t p = 0; p < parts; ++p) {
    out->keys[p].clear();
    out->positions[p].clear();
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto p = static_cast<size_t>(owner(keys[i]));
    out->keys[p].push_back(keys[i]);
    out->positions[p].push_back(static_cast<uint32_t>(i));
  }
}

}  // namespace

void Deduper::Into(std::span<const Key> keys, Dedup* out) {
  seen_.clear();
  out->unique.clear();
  out->index.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto [it, fresh] = seen_.try_emplace(keys[i], static_cast<uint32_t>(out->unique.size()));
    if (fresh) out->unique.push_back(keys[i]);
    out->index[i] = it->second;
  }
}

Dedup DedupKeys(std::span<const Key> keys) {
  Deduper deduper;
  Dedup out;
  deduper.Into(keys, &out);
  return out;
}

void ExpandRows(const RowBatch& unique_rows, const Dedup& dedup, int32_t floats, RowBatch* out) {
  const auto width = static_cast<size_t>(floats);
  out->keys.resize(dedup.index.size());
  out->values.resize(dedup.index.size() * width);
  for (size_t i = 0; i < dedup.index.size(); ++i) {
    out->keys[i] = unique_rows.keys[dedup.index[i]];
    CopyRow(unique_rows.values.data() + dedup.index[i] * width, out->values.data() + i * width,
            floats);
  }
}

Status SumDuplicateRows(std::span<const float> rows, const Dedup& dedup, int32_t floats,
                        RowBatch* out) {
  const auto width = static_cast<size_t>(floats);
  if (rows.size() != dedup.index.size() * width) {
    return Status::InvalidInput("SumDuplicateRows: rows do not match the deduplicated keys");
  }
  out->keys = dedup.unique;
  out->values.assign(dedup.unique.size() * width, 0.0f);
  for (size_t i = 0; i < dedup.index.size(); ++i) {
    float* sum = out->values.data() + dedup.index[i] * width;
    const float* row = rows.data() + i * width;
    for (size_t f = 0; f < width; ++f) sum[f] += row[f];
  }
  return Status::Ok();
}

Status PartitionByNodeInto(std::span<const Key> keys, int32_t nodes, Partition* out) {
  if (nodes < 1) return Status::InvalidInput("PartitionByNode: nodes must be >= 1");
  PartitionInto(
      keys, static_cast<size_t>(nodes), [nodes](Key k) { return NodeOf(k, nodes); }, out);
  return Status::Ok();
}

StatusOr<Partition> PartitionByNode(std::span<const Key> keys, int32_t nodes) {
  Partition out;
  RETURN_IF_ERROR(PartitionByNodeInto(keys, nodes, &out));
  return out;
}

Status PartitionByGpuInto(std::span<const Key> keys, int32_t nodes, int32_t gpus_per_node,
                          Partition* out) {
  if (nodes < 1 || gpus_per_node < 1) {
    return Status::InvalidInput("PartitionByGpu: nodes and gpus_per_node must be >= 1");
  }
  PartitionInto(
      keys, static_cast<size_t>(gpus_per_node),
      [nodes, gpus_per_node](Key k) { return GpuOf(k, nodes, gpus_per_node); }, out);
  return Status::Ok();
}

StatusOr<Partition> PartitionByGpu(std::span<const Key> keys, int32_t nodes,
                                   int32_t gpus_per_node) {
  Partition out;
  RETURN_IF_ERROR(PartitionByGpuInto(keys, nodes, gpus_per_node, &out));
  return out;
}

RowBatch SplitRows(const RowBatch& batch, const Partition& partition, size_t part, int32_t floats) {
  const auto width = static_cast<size_t>(floats);
  const std::vector<uint32_t>& positions = partition.positions.at(part);
  RowBatch out;
  out.keys = partition.keys[part];
  out.values.resize(positions.size() * width);
  for (size_t j = 0; j < positions.size(); ++j) {
    CopyRow(batch.values.data() + positions[j] * width, out.values.data() + j * width, floats);
  }
  return out;
}

Status ScatterRows(std::span<const RowBatch> parts, const Partition& partition, int32_t floats,
                   RowBatch* out) {
  if (parts.size() != partition.parts()) {
    return Status::InvalidInput("ScatterRows: one batch per part is required");
  }
  const auto width = static_cast<size_t>(floats);
  size_t total = 0;
  for (const auto& positions : partition.positions) total += positions.size();
  out->keys.resize(total);
  out->values.resize(total * width);
  for (size_t p = 0; p < parts.size(); ++p) {
    const std::vector<uint32_t>& positions = partition.positions[p];
    if (parts[p].keys.size() != positions.size() ||
        parts[p].values.size() < positions.size() * width) {
      return Status::InvalidInput("ScatterRows: a part's rows do not match its keys");
    }
    for (size_t j = 0; j < positions.size(); ++j) {
      out->keys[positions[j]] = parts[p].keys[j];
      CopyRow(parts[p].values.data() + j * width, out->values.data() + positions[j] * width,
              floats);
    }
  }
  return Status::Ok();
}

}  // namespace troupe::paramserver
