// The CUDA backends plugin's entry point: the one symbol troupe looks up after dlopen() of
// troupe_cuda_backends.so (built from gpu/cuda/ with cuBLAS, cuBLASLt and NCCL; gpu/cuda_backends
// loads it). Everything CUDA is reached through this table, so the troupe binary, the tests and
// `troupe validate` link no CUDA library and load none until a run asks for a CUDA backend.
//
// The symbol has C linkage; the table's functions pass C++ types (Status, std::unique_ptr, the
// backend interfaces), so the plugin must come from the same build of troupe as the binary.
// Two checks say so before any entry is called: abi_version (raise kCudaBackendsAbi whenever this
// table or a type it passes changes) and build_id (troupe's version and the C++ compiler, set by
// gpu/CMakeLists.txt on both sides). The plugin is never unloaded: the backends it made run
// code from it until the process exits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/plugin_loader.hpp"
#include "base/status.hpp"

namespace troupe::paramserver {
struct HbmConfig;
class HbmBackend;
}  // namespace troupe::paramserver

namespace troupe::gpu {

class ComputeBackend;
class CollectiveBackend;
class EmbeddingBackend;
struct DeviceReport;
struct EmbeddingMeasurement;
struct AllReduceMeasurement;
struct HashMeasurement;
struct NcclGangOptions;
class NcclGangComm;

inline constexpr uint32_t kCudaBackendsAbi = 3;
inline constexpr char kCudaBackendsEntry[] = "troupe_cuda_backends";

struct CudaBackendsTable {
  PluginHeader header;  // abi_version and build_id (base/plugin_loader.hpp)
  // The backends (each answers an error Status where no GPU is usable).
  Status (*make_compute)(std::unique_ptr<ComputeBackend>* out);
  Status (*make_nccl_collective)(std::unique_ptr<CollectiveBackend>* out);
  Status (*make_embedding)(std::unique_ptr<EmbeddingBackend>* out);
  Status (*make_hbm_table)(const paramserver::HbmConfig& config,
                           std::unique_ptr<paramserver::HbmBackend>* out);
  // The GPUs the driver lists and NCCL's version (gpu/devices.hpp).
  void (*append_devices)(DeviceReport* report);
  // gpu-check.sh's figures (troupe_gpu_bench).
  Status (*measure_embedding)(int64_t rows, int32_t dim, int64_t bags, int32_t pool, int repeats,
                              EmbeddingMeasurement* out);
  Status (*measure_nccl_all_reduce)(size_t floats, int ranks, int repeats,
                                    AllReduceMeasurement* out);
  Status (*measure_hash_shard)(size_t keys, int repeats, HashMeasurement* out);
  // NCCL across processes (gpu/nccl_gang.hpp): the unique id (128 bytes) and one process's share
  // of the communicator.
  Status (*make_nccl_unique_id)(std::array<uint8_t, 128>* out);
  Status (*make_nccl_gang_comm)(const NcclGangOptions& options, std::unique_ptr<NcclGangComm>* out);
};

using CudaBackendsEntryFn = const CudaBackendsTable* (*)();

}  // namespace troupe::gpu
