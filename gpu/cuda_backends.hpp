// Where the CUDA backends come from: troupe_cuda_backends.so, a plugin loaded with dlopen() the
// first time a run asks for a CUDA backend (backends.compute: cuda, backends.collective: nccl,
// paramserver.hbm_backend: cuda, the embedding and device listing of the GPU checks). Nothing
// else loads it, so emulated runs, `troupe validate` and the tests of the CPU parts never map
// cuBLAS, cuBLASLt or NCCL, and the binary runs where those libraries are not installed.
//
// Where it is looked for:
//   1. $TROUPE_CUDA_BACKENDS, when set: that file and no other;
//   2. else troupe_cuda_backends.so beside the running executable (/proc/self/exe);
//   3. else, when that file does not exist, the plugin this build tree made (so test and
//      benchmark programs, which live in other folders, find it).
// A plugin that cannot be loaded (absent, a CUDA library missing, another build of troupe) is an
// Internal Status with one line: "CUDA backends plugin: " and dlerror()'s words or the mismatch.
// The outcome of the first load is kept for the life of the process.
#pragma once

#include <string>

#include "base/status.hpp"
#include "gpu/cuda_backends_abi.hpp"

namespace troupe::gpu {

inline constexpr char kCudaBackendsFile[] = "troupe_cuda_backends.so";
inline constexpr char kCudaBackendsVariable[] = "TROUPE_CUDA_BACKENDS";

// The file LoadCudaBackends would open now.
std::string CudaBackendsPath();

// dlopen(path) and the two checks of cuda_backends_abi.hpp; no caching.
Status LoadCudaBackendsFrom(const std::string& path, const CudaBackendsTable** table);

// The plugin at CudaBackendsPath(), loaded once per process.
Status LoadCudaBackends(const CudaBackendsTable** table);

}  // namespace troupe::gpu
