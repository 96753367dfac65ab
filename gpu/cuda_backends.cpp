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
  const PluginHeader* header = nullptr;
  if (Status s = LoadPluginFrom(CudaBackendsSpec(), path, &header); !s.ok()) return s;
  // The header is the table's first member (cuda_backends_abi.hpp).
  *table = reinterpret_cast<const CudaBackendsTable*>(header);
  return Status::Ok();
}

Status LoadCudaBackends(const CudaBackendsTable** table) {
  struct Loaded {
    Status status;
    const CudaBackendsTable* table = nullptr;
  };
  static const Loaded once = [] {
    Loaded l;
    l.status = LoadCudaBackendsFrom(CudaBackendsPath(), &l.table);
    return l;
  }();
  if (once.status.ok()) *table = once.table;
  return once.status;
}

}  // namespace troupe::gpu
