#include "base/plugin_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace troupe {
namespace {

Status PluginError(const PluginSpec& spec, const std::string& why) {
  return Status::Internal(std::string(spec.name) + ": " + why + spec.hint);
}

std::string BesideExecutable(const char* file) {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "";
  return (exe.parent_path() / file).string();
}

}  // namespace

std::string PluginPath(const PluginSpec& spec) {
  if (const char* path = std::getenv(spec.variable); path != nullptr && *path != '\0') return path;
  const std::string beside = BesideExecutable(spec.file);
  std::error_code error;
  if (*spec.built != '\0' && (beside.empty() || !std::filesystem::exists(beside, error))) {
    return spec.built;
  }
  return beside.empty() ? std::string(spec.file) : beside;
}

Status LoadPluginFrom(const PluginSpec& spec, const std::string& path, const PluginHeader** table) {
  // RTLD_LOCAL: the plugin's own symbols stay out of the process's global scope.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return PluginError(spec, why != nullptr ? why : path + ": dlopen failed");
  }
  using EntryFn = const PluginHeader* (*)();
  auto entry = reinterpret_cast<EntryFn>(dlsym(handle, spec.entry));
  if (entry == nullptr) {
    const std::string why = path + ": no entry point " + spec.entry;
    dlclose(handle);
    return PluginError(spec, why);
  }
  const PluginHeader* loaded = entry();
  const bool same_abi = loaded != nullptr && loaded->abi_version == spec.abi_version;
  if (!same_abi || std::strcmp(loaded->build_id, spec.build_id) != 0) {
    const std::string why = path + " is from another build of troupe (ABI " +
                            (loaded ? std::to_string(loaded->abi_version) : "?") + ", built by " +
                            (same_abi ? loaded->build_id : "?") + "; this troupe: ABI " +
                            std::to_string(spec.abi_version) + ", built by " + spec.build_id + ")";
    dlclose(handle);  // nothing was made from it yet
    return PluginError(spec, why);
  }
  *table = loaded;
  return Status::Ok();
}

}  // namespace troupe
