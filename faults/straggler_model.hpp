// Stragglers (docs/failures.md, "Stragglers"): slow episodes of GPUs, hosts and links — gray
// failures that leave a device up but slow — drawn per component as a Poisson process over a
// window, or read from a trace (faults/straggler_trace.hpp). GPU and host episodes become the
// run's `slow` faults: a slow server stamps its factor on the leases that start while it is slow,
// and a synchronous job runs at its slowest server's speed. Link episodes become stretches of a
// rack's uplink (both directions) at a fraction of its capacity, which the fabric applies
// (scheduling/fabric_round.hpp).
//
// Contract: CheckStragglers refuses, as one InvalidInput line naming the field, an unknown
// component, a component listed twice, one without a rate or with two, a link with a rate other
// than mtbf_h, an MTBF of 0, factor_min > factor_max and a window that ends before it starts.
// DrawStragglers is a pure function of the block, the seed and the universe; each component draws
// from a stream of its own. A gpu episode slows the server that holds the GPU (the server's rate
// is its GPUs' rates summed), a host episode the server, a link episode a rack's uplink (`server`
// holds the rack; one process per rack, at 1 / mtbf_h). CheckStragglerRun refuses `link` in a run
// without a fabric or a real one. SlowFaultsOf merges the episodes of each server (each rack's,
// for links) into slow faults that never overlap: where episodes overlap the slowest factor holds
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

inline constexpr int kLinkComponent = 2;  // kStragglerComponents[2]

// One slow episode: `server` (for a link episode: the rack whose uplink) runs at `factor` of its
// speed over [start_s, start_s + duration_s).
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
// run (not a parameter-server or OASiS run); `link` needs a fabric and an emulated run; the
// what-if replay needs a run that replays exactly (emulated, no agents, no external scheduler).
Status CheckStragglerRun(const config::RunConfig& cfg, const std::string& name);

// The expected episodes an hour of one component on a server of `gpus` GPUs.
double EpisodesPerHour(const config::StragglerComponent& c, double gpus);

// The racks of the universe (0 without a fabric).
int64_t RacksOf(const FaultUniverse& universe);

// Appends the episodes drawn over [start_s, end_s) to `out`. Rates that draw more than a million
// episodes, of every component together, are refused (InvalidInput on faults.stragglers).
Status DrawStragglers(const config::Stragglers& stragglers, uint64_t run_seed,
                      const FaultUniverse& universe, std::vector<StragglerEpisode>* out);

// The episodes as slow faults on their servers, none overlapping another of its server (the
// slowest factor wins where episodes overlap), cause "straggler:COMPONENT" (of the slowest).
std::vector<FaultEvent> SlowFaultsOf(std::vector<StragglerEpisode> episodes);

// The drawn and the traced episodes, the trace read once: gpu and host episodes as slow faults
// appended to `server_faults`, link episodes as stretches that never overlap on a rack (the
// slowest holds), by rack then time, appended to `link_stretches`.
Status PlanStragglers(const config::Stragglers& stragglers, uint64_t run_seed,
                      const FaultUniverse& universe, std::vector<FaultEvent>* server_faults,
                      std::vector<LinkStretch>* link_stretches);

}  // namespace troupe
