// A live snapshot as the JSON the web view reads (/state, and each /events message).
#pragma once

#include <string>

#include "runtime/live_feed.hpp"

namespace troupe {

// Largest number of points the JCT CDF is drawn with (quantiles of the finished jobs).
inline constexpr int kLiveCdfPoints = 101;
// Faults listed: the latest ones (the count of all of them is sent too).
inline constexpr size_t kLiveFaultsShown = 100;

// One JSON object; `version` counts snapshots published (the page shows updates arriving).
std::string SnapshotJson(const LiveSnapshot& s, int64_t version);

// The JCT CDF of `jcts_s`: up to `points` (jct_s, fraction of jobs at or below) pairs, at evenly
// spaced quantiles, first and last included.
std::vector<std::pair<double, double>> JctCdf(std::vector<double> jcts_s, int points);

}  // namespace troupe
