// Where the network comes from: troupe_network.so, a plugin loaded with dlopen() the first time a
// run needs another process (nodes, a deployment's TLS, agents; network/network_abi.hpp lists
// what it holds). It is looked for as base/plugin_loader.hpp says: $TROUPE_NETWORK_PLUGIN, else
// beside the running executable, else the one this build tree made. A plugin that cannot be
// loaded is an Internal Status with one line: "network plugin: " and dlopen()'s words or the
// mismatch. The outcome of the first load is kept for the life of the process.
#pragma once

#include <string>

#include "base/status.hpp"
#include "network/network_abi.hpp"

namespace troupe {

inline constexpr char kNetworkFile[] = "troupe_network.so";
inline constexpr char kNetworkVariable[] = "TROUPE_NETWORK_PLUGIN";

// The file LoadNetwork would open now.
std::string NetworkPluginPath();

// dlopen(path) and the checks of base/plugin_loader.hpp; no caching.
Status LoadNetworkFrom(const std::string& path, const NetworkTable** table);

// The plugin at NetworkPluginPath(), loaded once per process.
Status LoadNetwork(const NetworkTable** table);

}  // namespace troupe
