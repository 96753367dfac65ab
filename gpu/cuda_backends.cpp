#include "gpu/cuda_backends.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace troupe::gpu {
namespace {

Status PluginError(const std::string& why) {
#ifdef TROUPE_HAVE_CUDA
  return Status::Internal("CUDA backends plugin: " + why);
#else
  return Status::Internal("CUDA backends plugin: " + why +
                          " (this build has no CUDA: configure with -DTROUPE_CUDA=ON)");
#endif
}

std::string BesideExecutable() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "";
  return (exe.parent_path() / kCudaBackendsFile).string();
}

}  // namespace

std::string CudaBackendsPath() {
  if (const char* path = std::getenv(kCudaBackendsVariable); path != nullptr && *path != '\0') {
    return path;
  }
  const std::string beside = BesideExecutable();
#ifdef TROUPE_CUDA_BACKENDS_BUILT
  std::error_code error;
  if (beside.empty() || !std::filesystem::exists(beside, error)) return TROUPE_CUDA_BACKENDS_BUILT;
#endif
  return beside.empty() ? std::string(kCudaBackendsFile) : beside;
}

Status LoadCudaBackendsFrom(const std::string& path, const CudaBackendsTable** table) {
  // RTLD_NOW: a CUDA library the plugin needs and cannot find fails here, with its name, rather
  // than at the first call. RTLD_LOCAL: its symbols stay out of the process's global scope.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return PluginError(why != nullptr ? why : path + ": dlopen failed");
  }
  auto entry = reinterpret_cast<CudaBackendsEntryFn>(dlsym(handle, kCudaBackendsEntry));
  if (entry == nullptr) {
    const std::string why = path + ": no entry point " + kCudaBackendsEntry;
    dlclose(handle);
    return PluginError(why);
  }
  const CudaBackendsTable* loaded = entry();
  if (loaded == nullptr || loaded->abi_version != kCudaBackendsAbi ||
      std::strcmp(loaded->build_id, TROUPE_BUILD_ID) != 0) {
    const std::string why =
        path + " is from another build of troupe (ABI " +
        (loaded ? std::to_string(loaded->abi_version) : "?") + ", built by " +
        (loaded && loaded->abi_version == kCudaBackendsAbi ? loaded->build_id : "?") +
        "; this troupe: ABI " + std::to_string(kCudaBackendsAbi) +
        ", built by " TROUPE_BUILD_ID ")";
    dlclose(handle);  // nothing was made from it yet
    return PluginError(why);
  }
  // Never dlclose'd from here on: the backends it makes run its code.
  *table = loaded;
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
