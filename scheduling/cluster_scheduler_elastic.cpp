// Elastic jobs (faults.recovery.on_server_loss continue_smaller, docs/faults.md "Recovery"): a job
// whose lease loses servers mid-round, with no spare to take, goes on at once on the parts it
// kept when they hold at least min_size_fraction of its GPUs: rolled back to its checkpoint and
// paying its restart, as after any failure, it trains at the smaller size's speed (the job's
// account scales it). At each later round it is placed whole when the policy and the room allow;
// otherwise it keeps the parts it ran on where no other job took them, and else waits as a
// whole job does.
#include <algorithm>
#include <cmath>
#include <vector>

#include "scheduling/cluster_scheduler_internal.hpp"
#include "scheduling/lease_credit.hpp"

namespace troupe::scheduling::engine_detail {
namespace {

bool Fits(const EngineState& st, const PlacementPart& part) {
  if (HeldOut(st, part.server)) return false;
  const ServerShape& free = st.ledger->free(part.server);
  return free.gpus >= part.gpus && free.cpus >= part.cpus && free.memory_gb >= part.memory_gb;
}

}  // namespace

bool ReletSmaller(EngineState& st, JobPlacement& placement, int32_t failed, double now_s) {
  if (st.options.continue_smaller_fraction <= 0 || now_s < 0 || st.round < 0 ||
      st.round_timer_fired || now_s >= st.current.end_s) {
    return false;
  }
  auto it = st.jobs.find(placement.job_id);
  if (it == st.jobs.end()) return false;
  PlacementParts kept;
  int32_t gpus = 0;
  for (const PlacementPart& part : placement.parts) {
    if (part.server == failed || !st.server_up[part.server]) continue;
    kept.push_back(part);
    gpus += part.gpus;
  }
  const int32_t job_gpus = it->second.view.gpus;
  if (gpus < FewestGpusAfterLoss(st.options.continue_smaller_fraction, job_gpus)) return false;
  placement.parts = kept;
  // A second loss at this instant ends the lease relet at it: the job (and the servers) take a
  // lease only over a later one, so this one starts just after.
  EngineState::Relet& relet = st.relets[placement.job_id];
  const double start_s = relet.at_s == now_s ? std::nextafter(relet.start_s, now_s + 1) : now_s;
  relet.start_s = start_s;
  relet.at_s = now_s;
  st.shrunk[placement.job_id] = std::move(kept);
  GrantRelet(st, placement, start_s);
  return true;
}

void PlaceShrunkJobs(EngineState& st, std::vector<JobPlacement>& placements) {
  std::vector<int64_t> ids;
  for (const auto& [id, parts] : st.shrunk) ids.push_back(id);
  std::sort(ids.begin(), ids.end());  // the same order every run
  for (int64_t id : ids) {
    const auto placed = [id](const JobPlacement& p) { return p.job_id == id; };
    auto it = st.jobs.find(id);
    const bool gone =
        it == st.jobs.end() || it->second.done || it->second.down || !it->second.has_actor;
    if (gone || std::any_of(placements.begin(), placements.end(), placed)) {
      st.shrunk.erase(id);  // ended, or placed whole: grown back
      continue;
    }
    const PlacementParts& parts = st.shrunk[id];
    if (!std::all_of(parts.begin(), parts.end(),
                     [&st](const PlacementPart& p) { return Fits(st, p); })) {
      st.shrunk.erase(id);  // its servers are taken: it waits, whole, as any job
      continue;
    }
    for (const PlacementPart& p : parts) st.ledger->Take(p.server, p.gpus, p.cpus, p.memory_gb);
    TrackedJob& job = it->second;
    placements.push_back(
        JobPlacement{.job_id = id, .parts = parts, .job = &job.view, .owner = &job});
  }
}

}  // namespace troupe::scheduling::engine_detail
