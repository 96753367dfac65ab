#include "network/network_plugin.hpp"

namespace troupe {
namespace {

PluginSpec NetworkSpec() {
  return PluginSpec{.name = "network plugin",
                    .file = kNetworkFile,
                    .variable = kNetworkVariable,
                    .entry = kNetworkEntry,
                    .abi_version = kNetworkAbi,
                    .build_id = TROUPE_BUILD_ID,
                    .built = TROUPE_NETWORK_BUILT};
}

}  // namespace

std::string NetworkPluginPath() { return PluginPath(NetworkSpec()); }

Status LoadNetworkFrom(const std::string& path, const NetworkTable** table) {
  const PluginHeader* header = nullptr;
  if (Status s = LoadPluginFrom(NetworkSpec(), path, &header); !s.ok()) return s;
  // The header is the table's first member (network_abi.hpp).
  *table = reinterpret_cast<const NetworkTable*>(header);
  return Status::Ok();
}

Status LoadNetwork(const NetworkTable** table) {
  struct Loaded {
    Status status;
    const NetworkTable* table = nullptr;
  };
  static const Loaded once = [] {
    Loaded l;
    l.status = LoadNetworkFrom(NetworkPluginPath(), &l.table);
    return l;
  }();
  if (once.status.ok()) *table = once.table;
  return once.status;
}

}  // namespace troupe
