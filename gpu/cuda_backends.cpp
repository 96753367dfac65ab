#include "gpu/cuda_backends.hpp"

#include "base/plugin_loader.hpp"

namespace troupe::gpu {
namespace {

PluginSpec CudaBackendsSpec() {
  PluginSpec spec{.name = "CUDA backends plugin",
                  .file = kCudaBackendsFile,
                  .variable = kCudaBackendsVariable,
                  .entry = kCudaBackendsEntry,
                  .abi_version = kCudaBackendsAbi,
                  .build_id = TROUPE_BUILD_ID};
#ifdef TROUPE_CUDA_BACKENDS_BUILT
  spec.built = TROUPE_CUDA_BACKENDS_BUILT;
#endif
#ifndef TROUPE_HAVE_CUDA
  spec.hint = " (this build has no CUDA: configure with -DTROUPE_CUDA=ON)";
#endif
  return spec;
}

}  // namespace

std::string CudaBackendsPath() { return PluginPath(CudaBackendsSpec()); }

Status LoadCudaBackendsFrom(const std::string& path, const CudaBackendsTable** table) {
  return LoadPluginTableFrom(CudaBackendsSpec(), path, table);
}

Status LoadCudaBackends(const CudaBackendsTable** table) {
  return LoadPluginTableOnce(CudaBackendsSpec(), table);
}

}  // namespace troupe::gpu
