// CudaHbmTable: HBM-PS in GPU memory — paramserver's HbmBackend (hbm_table.hpp) implemented over
// one DeviceHashShard (cuda/device_hash_shard.hpp) per GPU of the node, so the parameter server
// can use it wherever it uses CpuHbmTable (the CPU reference) and get the same answers.
//
// Same contract as CpuHbmTable: keys partitioned by GpuOf (key modulo), the row budget
// bytes_per_gpu / RowCost per shard with the overflow rows rejected in input order, a key
// repeated in one Insert takes its last row, a key repeated in one Accumulate is updated once per
// occurrence in order (SGD or Adagrad, the same arithmetic), Get and the returned key lists in
// input order. Differences, all deterministic:
//   - Drain returns each shard's rows sorted by key (CpuHbmTable: in slot order).
//   - Keys 2^64 - 1 and 2^64 - 2 mark free and erased slots on the GPU: Insert rejects them.
//   - Shard g lives on GPU g % (visible GPUs): a one-GPU machine holds every shard.
//   - Device memory per shard: 2 × the budget's rows rounded up to a power of two, each slot a
//     key and a row (at most 50% load), plus a 4-byte claim per slot.
// A CUDA failure during an operation returns Internal naming the table (the operation's effect on
// the failing shard is then unspecified); MakeCudaHbmTable reports a config paramserver's
// CheckHbmConfig rejects as InvalidInput and device errors as Internal. Nothing throws.
#pragma once

#include <memory>

#include "base/status.hpp"
#include "paramserver/hbm_table.hpp"

namespace troupe::gpu {

// InvalidInput for a bad config (checked before the CUDA backends plugin is loaded); Internal
// where the plugin cannot load (gpu/cuda_backends.hpp) or no GPU is usable.
Status MakeCudaHbmTable(const paramserver::HbmConfig& config,
                        std::unique_ptr<paramserver::HbmBackend>* out);

}  // namespace troupe::gpu
