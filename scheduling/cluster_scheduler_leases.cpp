// The round's leases (cluster_scheduler_internal.hpp): each placed job's lease granted anew or
// standing, and every server that hears of the round told its share.
#include <algorithm>
#include <limits>

#include "scheduling/cluster_scheduler_internal.hpp"

namespace troupe::scheduling::engine_detail {
namespace {

// Seconds one iteration of the job computes on the placement, as the engine estimates it (its
// profiled matrix at the share, on the slowest GPU type of its parts): the gaps between the
// bursts of the phased traffic model.
double EstimatedComputeSeconds(const EngineState& st, const TrackedJob& job,
                               const scheduling::JobPlacement& p) {
  const double gpus = p.gpus();
  const double speedup =
      job.view.sensitivity ? job.view.sensitivity->At(p.cpus() / gpus, p.memory_gb() / gpus) : 1;
  double type_speed = std::numeric_limits<double>::infinity();
  for (const scheduling::PlacementPart& part : p.parts) {
    type_speed = std::min(type_speed, job.view.TypeSpeed(st.ledger->shape(part.server).gpu_type));
  }
  return job.view.iter_time_s / (speedup * type_speed);
}

// With a fabric: each placement's communication this round (st.network, by placement).
void PlanNetwork(EngineState& st, const std::vector<scheduling::JobPlacement>& placements) {
  st.network = nullptr;
  if (!st.fabric) return;
  const auto compute_s = [&](size_t i) {
    return EstimatedComputeSeconds(st, *st.placed_jobs[i], placements[i]);
  };
  st.network = &st.fabric->Plan(placements, compute_s, st.options.round_s);
}

// Has the actor of a job that arrived without one spawned, before any lease can reach it.
void SpawnJob(EngineState& st, TrackedJob& job) {
  st.out->SpawnJob(job.record);
  job.has_actor = true;
}

// The round's placed jobs' entries, in its order (where a placement does not name its job's
// entry, the line that leads to it asked for a few placements ahead), and the parts on each server.
void FindPlacedJobs(EngineState& st, const std::vector<scheduling::JobPlacement>& placements,
                    std::vector<size_t>& parts_on_server) {
  std::vector<TrackedJob*>& placed = st.placed_jobs;
  placed.resize(placements.size());
  for (size_t i = 0; i < placements.size(); ++i) {
    const scheduling::JobPlacement& p = placements[i];
    if (i + 4 * kPrefetchAhead < placements.size()) {
      const scheduling::JobPlacement& ahead = placements[i + 4 * kPrefetchAhead];
      if (ahead.owner == nullptr && ahead.job != nullptr) {
        __builtin_prefetch(&ahead.job->id);
      } else if (ahead.owner == nullptr) {
        st.jobs.prefetch(ahead.job_id);
      }
    }
    placed[i] = &PlacedJob(st, p);
    for (const scheduling::PlacementPart& part : p.parts) ++parts_on_server[part.server];
  }
}

// Lists each job's parts to their servers where its lease is granted anew; notes them in
// standing_parts where it stands. Returns how many standing rounds were taken as they stood.
size_t GrantOrStand(EngineState& st, const std::vector<scheduling::JobPlacement>& placements) {
  const std::vector<TrackedJob*>& placed = st.placed_jobs;
  st.standing_parts.clear();
  size_t taken = 0;
  for (size_t i = 0; i < placements.size(); ++i) {
    const scheduling::JobPlacement& p = placements[i];
    if (i + kPrefetchAhead < placed.size()) PrefetchForLease(placed[i + kPrefetchAhead]);
    TrackedJob& job = *placed[i];
    if (!job.has_actor) SpawnJob(st, job);  // first placed: until now it was a record alone
    const int32_t parts = static_cast<int32_t>(p.parts.size());
    int32_t rounds_stood = 0;
    const JobNetworkRound network = st.network ? (*st.network)[i] : JobNetworkRound{};
    const LeaseFate fate = LeaseStands(st, job, p, i, network.changed, &rounds_stood);
    taken += fate == LeaseFate::kStandsTaken;
    st.round_jobs.push_back(p.job_id);
    for (int32_t k = 0; k < parts; ++k) {
      const scheduling::PlacementPart& part = p.parts[k];
      if (fate != LeaseFate::kGranted) {
        st.standing_parts.push_back({part.server, static_cast<int32_t>(i), k});
      } else {
        st.leases_by_server[part.server].grants.push_back(
            Grant{.job_id = p.job_id,
                  .gpus = part.gpus,
                  .parts = parts,
                  .cpus = part.cpus,
                  .memory_gb = part.memory_gb,
                  .type_speed = job.view.TypeSpeed(st.ledger->shape(part.server).gpu_type),
                  .network_s = network.network_s,
                  .rounds_stood = rounds_stood});
      }
      st.current.gpus_allocated += part.gpus;
      st.current.cpus_allocated += part.cpus;
      st.current.memory_gb_allocated += part.memory_gb;
    }
  }
  return taken;
}

// A server with nothing to grant hears nothing: its books catch up with the standing parts on it
// (extended, booked where they moved to it) in the round that next brings it a grant, before the
// grant (ServerActor). A live view shows every server every round (every_server_hears). So the
// standing parts are listed to the servers that hear alone, once the grants are known.
void TellServers(EngineState& st, const std::vector<scheduling::JobPlacement>& placements,
                 const std::vector<size_t>& parts_on_server) {
  std::vector<ServerRound>& by_server = st.leases_by_server;  // each emptied as it is sent
  const bool quiet_servers_hear = st.setup.every_server_hears;
  const auto hears = [&](size_t s) {
    return !by_server[s].grants.empty() || (quiet_servers_hear && parts_on_server[s] > 0);
  };
  for (const EngineState::StandingRef& ref : st.standing_parts) {
    if (!hears(static_cast<size_t>(ref.server))) continue;
    std::vector<StandingPart>& standing = by_server[ref.server].standing;
    // Most parts stand round after round: one allocation a server, not one per doubling.
    if (standing.empty()) standing.reserve(parts_on_server[ref.server]);
    const scheduling::JobPlacement& p = placements[ref.placement];
    const scheduling::PlacementPart& part = p.parts[ref.part];
    standing.push_back(StandingPart{p.job_id, part.gpus, part.cpus, part.memory_gb});
  }
  for (size_t s = 0; s < by_server.size(); ++s) {
    if (!hears(s)) continue;
    by_server[s].round = st.round;
    by_server[s].start_s = st.current.start_s;
    by_server[s].end_s = st.current.end_s;
    st.out->LeaseRound(static_cast<int32_t>(s), std::move(by_server[s]));
    by_server[s] = ServerRound{};
  }
}

}  // namespace

size_t LeaseRound(EngineState& st, const std::vector<scheduling::JobPlacement>& placements) {
  st.leases_by_server.resize(st.setup.servers.size());
  st.round_jobs.clear();
  st.round_standing.clear();
  std::vector<size_t> parts_on_server(st.leases_by_server.size(), 0);
  FindPlacedJobs(st, placements, parts_on_server);
  PlanNetwork(st, placements);
  const size_t taken = GrantOrStand(st, placements);
  TellServers(st, placements, parts_on_server);
  return placements.size() - taken;
}

}  // namespace troupe::scheduling::engine_detail
