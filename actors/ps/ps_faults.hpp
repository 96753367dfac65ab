// The faults of a parameter-server run, per node (docs/paramserver.md, "Faults"): which of the
// run's FaultPlan events (faults/fault_plan.hpp) hit PS node m, as windows of virtual time a
// shard can ask about without messages. Pure functions of the plan: deterministic.
//
//   slow ps:m x k   node m's SSD-PS works at k times its rate (ssd_bytes_per_s) from at_s for
//                   duration_s (0: to the end); overlapping windows multiply.
//   disk ps:m       node m's SSD-PS writes fail with EIO (ENOSPC with disk_full) in the window.
//   crash ps:m      handled by the fault injector (ps_fault_injector.hpp), not here.
// Faults aimed at other actors (servers, jobs, links) do not concern a PS run and are ignored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faults/fault_plan.hpp"

namespace troupe {

struct PsFaultWindow {
  double from_s = 0;
  double to_s = 0;  // infinity: to the end of the run
  double factor = 1;
  int error = 0;  // disk: the errno writes fail with
};

struct PsNodeFaults {
  std::vector<PsFaultWindow> slow, disk;

  // The SSD-PS rate multiplier at virtual time t (1: not slowed).
  double SlowFactorAt(double t) const;
  // The errno SSD-PS writes fail with at t (0: they do not).
  int DiskErrorAt(double t) const;
};

// Node m's share of `plan` (nodes in [0, nodes)).
PsNodeFaults PsNodeFaultsOf(const FaultPlan& plan, int32_t node, int32_t nodes);

// The nodes an event's target names, clipped to [0, nodes); none for non-PS targets.
std::vector<int32_t> PsNodesOf(const FaultEvent& event, int32_t nodes);

// Whether the plan crashes a PS node: then shards make every update durable before they
// acknowledge it (PsOptions::durable_updates).
bool PlanCrashesPsNodes(const FaultPlan& plan, int32_t nodes);

}  // namespace troupe
