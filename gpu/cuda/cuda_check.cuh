// Every CUDA, cuBLAS and NCCL call of gpu/cuda/ goes through one of these macros: a failure
// becomes a troupe::Status naming the call, the file and line and the library's own message,
// returned from the enclosing function (which must return Status). Nothing is ignored, so a test
// on a GPU fails loudly on the first bad call instead of comparing garbage.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "base/status.hpp"
#include "base/status_macros.hpp"

namespace troupe::gpu {

inline Status CudaFailure(const char* call, const char* file, int line, const std::string& why) {
  return Status::Internal(std::string(file) + ":" + std::to_string(line) + ": " + call +
                          " failed: " + why);
}

}  // namespace troupe::gpu

#define TROUPE_CUDA_CHECK(call)                                                \
  do {                                                                         \
    const cudaError_t troupe_cuda_err_ = (call);                               \
    if (troupe_cuda_err_ != cudaSuccess) {                                     \
      return ::troupe::gpu::CudaFailure(#call, __FILE__, __LINE__,             \
                                        cudaGetErrorString(troupe_cuda_err_)); \
    }                                                                          \
  } while (0)

// A kernel launch: the launch error, if any (bad configuration), is caught here; errors during
// execution surface at the next synchronising call, itself checked.
#define TROUPE_CUDA_CHECK_LAUNCH() TROUPE_CUDA_CHECK(cudaGetLastError())
