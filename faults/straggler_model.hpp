// Stragglers (docs/failures.md, "Stragglers"): slow episodes of GPUs and hosts — gray failures that
// leave a device up but slow — drawn per component as a Poisson process over a window, or read
// from a trace (faults/straggler_trace.hpp), and turned into the run's `slow` faults: a slow
// server stamps its factor on the leases that start while it is slow, and a synchronous job runs
// at its slowest server's speed.
//
// Contract: CheckStragglers refuses, as one InvalidInput line naming the field, an unknown
// component, a component listed twice, one without a rate or with two, an MTBF of 0, factor_min >
// factor_max and a window that ends before it starts. DrawStragglers is a pure function of the
// block, the seed and the universe; each component draws from a stream of its own. A gpu episode
// slows the server that holds the GPU (the server's rate is its GPUs' rates summed), a host
// episode the server. `link` episodes (a rack's uplink) are refused by CheckStragglerRun: the
// fabric's links keep their capacity for the whole run. SlowFaultsOf merges the episodes of each
// server into slow faults that never overlap: where episodes overlap the slowest factor holds
// (they do not compose). No CAF.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "config/config.pb.h"
#include "faults/fault_plan.hpp"

namespace troupe {

// The devices a straggler slows, in the order of their streams.
inline constexpr std::array<const char*, 3> kStragglerComponents = {"gpu", "host", "link"};

// One slow episode: `server` runs at `factor` of its speed over [start_s, start_s + duration_s).
struct StragglerEpisode {
  int component = 0;  // index into kStragglerComponents
  int64_t server = 0;
  double start_s = 0;
  double duration_s = 0;
  double factor = 1;
};

// The block on its own (no run shape needed); `where` prefixes messages.
Status CheckStragglers(const config::Stragglers& stragglers, const std::string& where);

// What only the whole config can say: stragglers slow the servers of an emulated or real cluster
// run (not a parameter-server or OASiS run); `link` needs a fabric and is not supported yet; the
// what-if replay needs a run that replays exactly (emulated, no agents, no external scheduler).
Status CheckStragglerRun(const config::RunConfig& cfg, const std::string& name);

// The expected episodes an hour of one component on a server of `gpus` GPUs.
double EpisodesPerHour(const config::StragglerComponent& c, double gpus);

// Appends the episodes drawn over [start_s, end_s) to `out`.
Status DrawStragglers(const config::Stragglers& stragglers, uint64_t run_seed,
                      const FaultUniverse& universe, std::vector<StragglerEpisode>* out);

// The episodes as slow faults on their servers, none overlapping another of its server (the
// slowest factor wins where episodes overlap), cause "straggler:COMPONENT" (of the slowest).
std::vector<FaultEvent> SlowFaultsOf(std::vector<StragglerEpisode> episodes);

// The drawn and the traced episodes as slow faults, appended to `out`.
Status PlanStragglers(const config::Stragglers& stragglers, uint64_t run_seed,
                      const FaultUniverse& universe, std::vector<FaultEvent>* out);

}  // namespace troupe
