#include "scheduling/rack_placement.hpp"

#include <algorithm>

namespace troupe::scheduling {

int32_t NextSpreadRack(const ClusterLedger& ledger, int32_t gpus, const std::vector<bool>& taken) {
  // Racks that hold the whole job first, the tightest of them first; then the others, the most
  // free first, so the job spans as few as it can. Ties: lowest index.
  int32_t tightest = -1, freest = -1;
  for (int32_t r = 0; r < static_cast<int32_t>(taken.size()); ++r) {
    const int32_t free = ledger.rack_free_gpus(r);
    if (taken[r] || free == 0) continue;
    if (free >= gpus && (tightest < 0 || free < ledger.rack_free_gpus(tightest))) tightest = r;
    if (freest < 0 || free > ledger.rack_free_gpus(freest)) freest = r;
  }
  return tightest >= 0 ? tightest : freest;
}

void RackServersBySpread(const ClusterLedger& ledger, int32_t rack, std::vector<int32_t>* servers) {
  servers->clear();
  for (int32_t s : ledger.racks()->servers_of_rack[rack]) {
    if (ledger.free(s).gpus > 0) servers->push_back(s);
  }
  std::stable_sort(servers->begin(), servers->end(),
                   [&](int32_t a, int32_t b) { return ledger.free(a).gpus > ledger.free(b).gpus; });
}

namespace {

int32_t RacksSpanned(const RackLayout& layout, const PlacementParts& parts) {
  absl::InlinedVector<int32_t, 4> racks;
  for (const PlacementPart& p : parts) {
    const int32_t rack = layout.rack_of_server[p.server];
    if (std::find(racks.begin(), racks.end(), rack) == racks.end()) racks.push_back(rack);
  }
  return static_cast<int32_t>(racks.size());
}

}  // namespace

bool MaySpread(const ClusterLedger& ledger, const SchedJob& job, const PlacementParts& parts) {
  const RackLayout* layout = ledger.racks();
  if (layout == nullptr || layout->max_wait_s <= 0 || parts.size() < 2) return true;
  const double start_s = ledger.round_start_s();
  // A job that ran in the round before keeps running where it can: the rule is for starting.
  if (job.last_served_s >= start_s) return true;
  if (start_s - std::max(job.arrival_s, job.last_served_s) >= layout->max_wait_s) return true;
  if (job.gpus <= ledger.max_server_gpus()) return false;  // one server would have held it
  return RacksSpanned(*layout, parts) <= layout->MinRacks(job.gpus);
}

}  // namespace troupe::scheduling
