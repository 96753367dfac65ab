// Where a job that spans servers goes, and whether it may go there now (config fabric.placement;
// docs/network.md, "Placement"). Every mechanism's spread walks ForEachSpreadServer, so each
// follows the racks when the ledger has them (ClusterLedger::SetRacks, RackLayout says in which
// order) and takes the servers with the most free GPUs first otherwise, exactly as before.
//
// Contract: ForEachSpreadServer calls visit(server, free_gpus) for servers with free GPUs in the
// spread's order until visit returns true; it reads the ledger and changes nothing. MaySpread
// says whether a placement of several parts may be taken this round under the wait-or-spread
// rule: always without racks or with max_wait_s 0.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/placement.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

// The rack a spread of `gpus` GPUs takes next among those not yet `taken`, in the order
// RackLayout states (free GPUs do not change during one spread), or -1 when no rack has free GPUs.
int32_t NextSpreadRack(const ClusterLedger& ledger, int32_t gpus, const std::vector<bool>& taken);
// The rack's servers with free GPUs, the most free first (ties: lowest index).
void RackServersBySpread(const ClusterLedger& ledger, int32_t rack, std::vector<int32_t>* servers);

// first_rack (with racks): the rack the spread starts in instead of the first in that order
// (fabric.placement interleave's candidates, interleave_placement.hpp); -1: none.
template <typename Visit>
void ForEachSpreadServer(const ClusterLedger& ledger, int32_t gpus, Visit&& visit,
                         int32_t first_rack = -1) {
  if (ledger.racks() != nullptr) {
    // Racks are chosen one at a time: a spread usually ends in its first rack or two, so no
    // order of all of them is built (a round of a large cluster spreads hundreds of jobs).
    thread_local std::vector<bool> taken;
    thread_local std::vector<int32_t> servers;
    taken.assign(ledger.racks()->racks(), false);
    for (int32_t rack = first_rack >= 0 ? first_rack : NextSpreadRack(ledger, gpus, taken);
         rack >= 0; rack = NextSpreadRack(ledger, gpus, taken)) {
      taken[rack] = true;
      RackServersBySpread(ledger, rack, &servers);
      for (int32_t server : servers) {
        if (visit(server, ledger.free(server).gpus)) return;
      }
    }
    return;
  }
  for (int32_t free = ledger.max_server_gpus(); free >= 1; --free) {
    for (int32_t server : ledger.ServersWithFreeGpus(free)) {
      if (visit(server, free)) return;
    }
  }
}

bool MaySpread(const ClusterLedger& ledger, const SchedJob& job, const PlacementParts& parts);

}  // namespace troupe::scheduling
