// The CUDA implementations behind the plugin's table (gpu/cuda_backends_abi.hpp), defined in
// gpu/cuda/*.cu and cuda_hbm_table.cpp and reached only through gpu/cuda/plugin_entry.cpp. The
// rest of troupe calls the forwarders of the same purpose in gpu/ (MakeComputeBackend("cuda"),
// MakeCudaHbmTable, ...), which load the plugin first. C++17: the .cu files include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/status.hpp"
#include "gpu/collective_backend.hpp"
#include "gpu/compute_backend.hpp"
#include "gpu/cuda/device_hash_shard.hpp"
#include "gpu/devices.hpp"
#include "gpu/embedding.hpp"
#include "gpu/nccl_gang.hpp"

namespace troupe::paramserver {
struct HbmConfig;
class HbmBackend;
}  // namespace troupe::paramserver

namespace troupe::gpu::cuda_impl {

Status MakeComputeBackend(std::unique_ptr<ComputeBackend>* out);     // cublas_compute.cu
Status MakeNcclCollective(std::unique_ptr<CollectiveBackend>* out);  // nccl_collective.cu
Status MakeEmbedding(std::unique_ptr<EmbeddingBackend>* out);        // embedding.cu
Status MakeHbmTable(const paramserver::HbmConfig& config,            // cuda_hbm_table.cpp
                    std::unique_ptr<paramserver::HbmBackend>* out);
void AppendDevices(DeviceReport* report);  // cuda_devices.cu
Status MeasureEmbeddingBandwidth(int64_t rows, int32_t dim, int64_t bags, int32_t pool, int repeats,
                                 EmbeddingMeasurement* out);
Status MeasureNcclAllReduce(size_t floats, int ranks, int repeats, AllReduceMeasurement* out);
Status MeasureHashShard(size_t keys, int repeats, HashMeasurement* out);  // device_hash_shard.cu
Status MakeNcclUniqueId(NcclUniqueIdBytes* out);                          // nccl_gang.cu
Status MakeNcclGangComm(const NcclGangOptions& options, std::unique_ptr<NcclGangComm>* out);

}  // namespace troupe::gpu::cuda_impl
