// A live snapshot as the JSON the web view reads (/state, and each /events message).
#pragma once

#include <string>

#include "runtime/live_feed.hpp"

namespace troupe {

// Faults listed: the latest ones (the count of all of them is sent too).
inline constexpr size_t kLiveFaultsShown = 100;

// One JSON object; `version` counts snapshots published (the page shows updates arriving).
std::string SnapshotJson(const LiveSnapshot& s, int64_t version);

}  // namespace troupe
