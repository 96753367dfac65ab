// OptMechanism's per-round job state and its rounding of LP 2's mixes to single configurations
// (an implementation detail of scheduling/opt.hpp, shared by opt.cpp and opt_round.cpp).
//
// Why rounding: a job runs at its matrix's interpolated speed at the CPUs and memory it leases,
// not at LP 2's linear mix of grid points; for the supermodular matrices of real models a mix
// such as (1 CPU, 20 GB) + (12 CPUs, 250 GB) promises far more than its mean delivers, often less
// than the proportional share. So every job first takes one candidate: a grid point or its
// proportional point, where the speed the scheduler expects is exactly W_j there; TopUp then
// spends what is still spare.
//
// RoundToPoints contract: given LP 2's plan in `parts` (feasible on every server), each job LP 2
// mixed first takes the best candidate (at or above its fair value) inside the CPUs and memory
// its mix had; one with none there takes the best that its servers' spare capacity allows; one
// with none even then has its component (servers joined by spread jobs) reset: every job there
// to its proportional share, part by part, which always fits on a ledger that started the round
// empty. Then every job, in order, moves to the best candidate its allotment plus its servers'
// spare capacity allows (never worse). Ends with every job at one candidate, `value` its speed,
// `parts` its CPUs and memory, no server planned beyond its free capacity (a spread job's parts
// get their GPUs' share where their servers have room, the rest where there is room) and every job
// at or above its fair value. Returns the jobs reset.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/placement.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling::opt_detail {

struct GridPoint {
  double cpus = 0;  // per GPU
  double memory_gb = 0;
  double value = 1;
};

struct OptJob {
  const SchedJob* job = nullptr;
  PlacementParts parts;  // GPUs from PlaceGpus; CPUs and memory as planned
  int32_t gpus = 0;
  GridPoint fair;  // the proportional point and W_j there: constraint (5)
  std::shared_ptr<const std::vector<GridPoint>> points;  // undominated grid points
  const SensitivityMatrix* matrix = nullptr;             // null: insensitive (speed 1)
  int first_column = 0;                                  // of its mix, in the LP being built
  int first_part_column = 0;  // LP 2, spread jobs: CPUs and memory of each part, interleaved
  int mix_points = 1;         // grid points LP 2 mixed
  double value = 1;           // speed at what it leases
  bool rounded = false;       // at one candidate (while rounding)
};

int RoundToPoints(std::vector<OptJob>& jobs, const ClusterLedger& ledger);

// Then, job by job in order, each job may take its servers' remaining spare CPUs and memory up to
// the fastest point of its matrix within its allotment plus that spare (any point, on or off the
// grid: the fewest resources among the fastest), never slower than it was.
void TopUp(std::vector<OptJob>& jobs, const ClusterLedger& ledger);

}  // namespace troupe::scheduling::opt_detail
