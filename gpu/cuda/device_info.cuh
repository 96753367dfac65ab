// Facts about the GPUs gpu/cuda/ asks before it works: is any there (RequireGpu, so each backend
// fails with one clear line on a machine without one) and its peak memory bandwidth (the
// denominator of the embedding benchmark's "% of bandwidth").
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "gpu/cuda/cuda_check.cuh"

namespace troupe::gpu {

// *gpus (optional): how many are visible.
inline Status RequireGpu(const char* who, int* gpus = nullptr) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (gpus != nullptr) *gpus = count;
  if (err != cudaSuccess || count == 0) {
    return Status::Internal(std::string(who) + ": no usable GPU (" +
                            (err != cudaSuccess ? cudaGetErrorString(err) : "none found") + ")");
  }
  return Status::Ok();
}

// DDR: two transfers per memory clock over the bus; the clock attribute is in kHz.
inline Status PeakMemoryBandwidth(int device, double* bytes_per_s) {
  int clock_khz = 0, bus_bits = 0;
  TROUPE_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device));
  TROUPE_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  *bytes_per_s = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0);
  return Status::Ok();
}

}  // namespace troupe::gpu
