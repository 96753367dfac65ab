// Chooses the servers for one job's GPUs, given what each part needs besides GPUs.
//
// A job whose GPUs fit on one server is consolidated there, on the best fit: the server with the
// fewest free GPUs that still holds the whole part (ties: lowest index). Otherwise it is spread
// over the fewest servers: those with the most free GPUs first. Returns no parts when the job
// cannot be placed; the ledger is not changed (the caller takes what it accepts). With racks on
// the ledger (config fabric.placement consolidate), the spread goes rack by rack
// (rack_placement.hpp), and PlaceGpusByType gives no parts for a spread the wait-or-spread rule
// holds back this round.
//
// On a cluster of several GPU types, `gpu_type` keeps the search to servers of that type, and
// PlaceGpusByType tries the job's types from the one it runs fastest on (a job gains most there)
// before it lets a job span types (a gang job then runs at its slowest part's speed). On a
// cluster of one type both are exactly PlaceGpus over every server.
#pragma once

#include <functional>
#include <vector>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/placement.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

// CPUs and memory a part of `gpus` GPUs on `server` needs.
struct AuxDemand {
  double cpus = 0;
  double memory_gb = 0;
};
using AuxDemandFn = std::function<AuxDemand(int32_t server, int32_t gpus)>;

inline constexpr int32_t kAnyGpuType = -1;

// `job`: the job placed, which a spread scorer on the ledger (fabric.placement interleave,
// interleave_placement.hpp) rates its candidate spreads for; null: the first spread is taken.
PlacementParts PlaceGpus(const ClusterLedger& ledger, int32_t gpus, const AuxDemandFn& demand,
                         int32_t gpu_type = kAnyGpuType, const SchedJob* job = nullptr);

// The cluster's GPU types in the order `job` prefers them: fastest for it first (ties: lower
// index, so jobs of equal speed everywhere fill the types in index order).
std::vector<int32_t> TypesByJobSpeed(const ClusterLedger& ledger, const SchedJob& job);

PlacementParts PlaceGpusByType(const ClusterLedger& ledger, const SchedJob& job,
                               const AuxDemandFn& demand);

}  // namespace troupe::scheduling
