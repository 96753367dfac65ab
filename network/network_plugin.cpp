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
  return LoadPluginTableFrom(NetworkSpec(), path, table);
}

Status LoadNetwork(const NetworkTable** table) { return LoadPluginTableOnce(NetworkSpec(), table); }

}  // namespace troupe
