// CUDA side of gpu/devices.hpp: lists the GPUs the driver reports, and NCCL's version.
#include <cuda_runtime.h>

#include <string>

#include "gpu/cuda/cuda_impl.hpp"
#include "gpu/devices.hpp"

#ifdef TROUPE_HAVE_NCCL
#include <nccl.h>
#endif

namespace troupe::gpu {

void cuda_impl::AppendDevices(DeviceReport* report) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    report->cuda_status = std::string("no usable GPU: ") + cudaGetErrorString(err);
  } else if (count == 0) {
    report->cuda_status = "no GPU found";
  }
  for (int i = 0; err == cudaSuccess && i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    report->devices.push_back(
        DeviceInfo{"cuda", i, prop.name, static_cast<double>(prop.totalGlobalMem) / (1 << 30)});
  }
#ifdef TROUPE_HAVE_NCCL
  int version = 0;
  if (ncclGetVersion(&version) == ncclSuccess) {
    report->nccl_version = std::to_string(version / 10000) + "." +
                           std::to_string(version / 100 % 100) + "." +
                           std::to_string(version % 100);
  }
#endif
}

}  // namespace troupe::gpu
