#include "scheduling/synergy_sim.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "scheduling/mechanism_registry.hpp"
#include "scheduling/rack_placement.hpp"

namespace troupe::scheduling {
namespace {

bool FitsFree(const ClusterLedger& ledger, int32_t server, double cpus, double memory_gb) {
  return cpus <= ledger.free(server).cpus + kDemandSlack &&
         memory_gb <= ledger.free(server).memory_gb + kDemandSlack;
}

// Servers with free GPUs by (free GPUs, index): the order of Synergy's heaps.
std::vector<int32_t> FewestFreeFirst(const ClusterLedger& ledger) {
  std::vector<int32_t> servers;
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    if (ledger.free(s).gpus > 0) servers.push_back(s);
  }
  std::stable_sort(servers.begin(), servers.end(), [&ledger](int32_t a, int32_t b) {
    return ledger.free(a).gpus < ledger.free(b).gpus;
  });
  return servers;
}

}  // namespace

SynergySimMechanism::SynergySimMechanism(Kind kind, bool picked_first,
                                         const MechanismOptions& options)
    : kind_(kind),
      picked_first_(picked_first),
      paper_(MakeMechanism(kind == Kind::kTune ? "tune" : "greedy", options)) {}

std::vector<JobPlacement> SynergySimMechanism::PlaceRound(
    const std::vector<const SchedJob*>& ordered, ClusterLedger& ledger) {
  if (ledger.type_count() > 1 || ledger.racks() != nullptr || ledger.spread_scorer() != nullptr) {
    return paper_->PlaceRound(ordered, ledger);
  }
  placed_.clear();
  on_server_.assign(ledger.server_count(), {});
  index_.Reset(ledger);
  const RoundDemands demands(ledger);
  if (picked_first_) {
    std::vector<const SchedJob*> picked;
    int32_t gpus_left = ledger.free_gpus();
    for (const SchedJob* job : ordered) {
      if (job->gpus <= 0 || job->gpus > gpus_left) continue;
      gpus_left -= job->gpus;
      picked.push_back(job);
    }
    if (kind_ == Kind::kTune) {
      std::stable_sort(picked.begin(), picked.end(),
                       [](const SchedJob* a, const SchedJob* b) { return a->gpus > b->gpus; });
    }
    for (const SchedJob* job : picked) {
      if (job->gpus <= ledger.free_gpus()) Place(demands, *job, ledger);
    }
  } else {
    for (const SchedJob* job : ordered) {
      if (ledger.free_gpus() == 0) break;
      if (job->gpus <= 0 || job->gpus > ledger.free_gpus()) continue;
      Place(demands, *job, ledger);
    }
  }
  std::vector<JobPlacement> placements;
  placements.reserve(placed_.size());
  for (Placed& p : placed_) placements.push_back(std::move(p.placement));
  return placements;
}

void SynergySimMechanism::Place(const RoundDemands& demands, const SchedJob& sched_job,
                                ClusterLedger& ledger) {
  const RoundDemands::Job job = demands.Prepare(sched_job);
  PlacementParts parts = Fit(demands, job, kIdeal, ledger);
  if (parts.empty() && kind_ == Kind::kTune) {
    parts = Fit(demands, job, kFallback, ledger);
    if (parts.empty()) {
      for (const auto& [server, gpus] : RoomServers(job.gpus, ledger)) {
        MakeRoom(demands, job, server, gpus, ledger);
      }
      // Synergy's simulator stops the run where even this fails; the job waits here instead.
      parts = Fit(demands, job, kFallback, ledger);
    }
  }
  if (!parts.empty()) Commit(job, std::move(parts), ledger);
}

PlacementParts SynergySimMechanism::Fit(const RoundDemands& demands, const RoundDemands::Job& job,
                                        const DemandLevel& level, const ClusterLedger& ledger) {
  const int32_t gpus = job.gpus;
  const auto demand = [&](int32_t server, int32_t g) {
    return (demands.*level.of)(job, server, g);
  };
  // One server holding all of D, fewest free GPUs first: for g = 1 also the first server the
  // spread below would take the GPU on, so the index answers it whole.
  const int32_t best = index_.Find(ledger, gpus, (demands.*level.bound)(job), demand);
  if (best >= 0) {
    const AuxDemand d = demand(best, gpus);
    return {PlacementPart{best, gpus, d.cpus, d.memory_gb}};
  }
  if (gpus == 1) return {};
  PlacementParts parts;
  int32_t left = gpus;
  for (int32_t s : FewestFreeFirst(ledger)) {
    if (left == 0) break;
    const AuxDemand d = demand(s, gpus);
    const double cpus = d.cpus / gpus, memory_gb = d.memory_gb / gpus;
    int32_t taken = 0;
    while (taken < ledger.free(s).gpus && taken < left &&
           FitsFree(ledger, s, (taken + 1) * cpus, (taken + 1) * memory_gb)) {
      ++taken;
    }
    if (taken > 0) parts.push_back(PlacementPart{s, taken, taken * cpus, taken * memory_gb});
    left -= taken;
  }
  if (left > 0) return {};
  if (parts.size() > 1 && !MaySpread(ledger, *job.job, parts)) return {};
  return parts;
}

std::vector<std::pair<int32_t, int32_t>> SynergySimMechanism::RoomServers(
    int32_t gpus, const ClusterLedger& ledger) const {
  if (gpus > 1) {
    for (int32_t s = 0; s < ledger.server_count(); ++s) {
      if (ledger.free(s).gpus >= gpus) return {{s, gpus}};
    }
  }
  std::vector<std::pair<int32_t, int32_t>> servers;
  int32_t left = gpus;
  for (int32_t s : FewestFreeFirst(ledger)) {
    if (left == 0) break;
    const int32_t counted = std::min(left, ledger.free(s).gpus);
    servers.emplace_back(s, counted);
    left -= counted;
  }
  return servers;
}

void SynergySimMechanism::MakeRoom(const RoundDemands& demands, const RoundDemands::Job& job,
                                   int32_t server, int32_t gpus, ClusterLedger& ledger) {
  const AuxDemand share_of_job = demands.Fallback(job, server, job.gpus);
  const double part = static_cast<double>(gpus) / job.gpus;
  double need_cpus = std::max(0.0, share_of_job.cpus * part - ledger.free(server).cpus);
  double need_memory = std::max(0.0, share_of_job.memory_gb * part - ledger.free(server).memory_gb);
  if (need_cpus <= kDemandSlack && need_memory <= kDemandSlack) return;
  std::vector<int32_t> peers = on_server_[server];
  const auto key = [this](int32_t i) {
    const JobPlacement& p = placed_[i].placement;
    const double g = p.gpus();
    return std::make_tuple(p.parts.size(), -p.cpus() / g, -p.memory_gb() / g);
  };
  std::stable_sort(peers.begin(), peers.end(),
                   [&key](int32_t a, int32_t b) { return key(a) < key(b); });
  size_t reverted = 0;  // the first `reverted` peers go back to their shares
  for (int32_t i : peers) {
    const Placed& peer = placed_[i];
    int32_t here = 0;
    for (const PlacementPart& p : peer.placement.parts) here += p.server == server ? p.gpus : 0;
    const double fraction = static_cast<double>(here) / peer.placement.gpus();
    const AuxDemand fair = demands.Proportional(server, here);
    const double excess_cpus = std::max(0.0, peer.placement.cpus() * fraction - fair.cpus);
    const double excess_memory =
        std::max(0.0, peer.placement.memory_gb() * fraction - fair.memory_gb);
    need_cpus = std::max(0.0, need_cpus - excess_cpus);
    need_memory = std::max(0.0, need_memory - excess_memory);
    ++reverted;
    if (need_cpus <= kDemandSlack && need_memory <= kDemandSlack) break;
  }
  // Synergy's code reverts them one after another; here every one is given back before any takes
  // its share, so that a part below its share in one resource never overdraws the server in
  // between. Where the shares would still overdraw a server (a peer left as it was holds more than
  // its own share), the next peers are reverted too: at their shares all of them fit.
  while (reverted < peers.size() && !SharesFit(demands, peers, reverted, ledger)) ++reverted;
  for (size_t k = 0; k < reverted; ++k) {
    for (const PlacementPart& p : placed_[peers[k]].placement.parts) {
      ledger.Give(p.server, p.gpus, p.cpus, p.memory_gb);
      index_.Update(ledger, p.server);
    }
  }
  for (size_t k = 0; k < reverted; ++k) {
    Placed& peer = placed_[peers[k]];
    for (PlacementPart& p : peer.placement.parts) {
      const AuxDemand share = ShareOfPart(demands, peer, p);
      p.cpus = share.cpus;
      p.memory_gb = share.memory_gb;
      ledger.Take(p.server, p.gpus, p.cpus, p.memory_gb);
      index_.Update(ledger, p.server);
    }
  }
}

AuxDemand SynergySimMechanism::ShareOfPart(const RoundDemands& demands, const Placed& peer,
                                           const PlacementPart& part) const {
  const AuxDemand d = demands.Fallback(peer.job, part.server, peer.job.gpus);
  return {d.cpus * part.gpus / peer.job.gpus, d.memory_gb * part.gpus / peer.job.gpus};
}

bool SynergySimMechanism::SharesFit(const RoundDemands& demands, const std::vector<int32_t>& peers,
                                    size_t reverted, const ClusterLedger& ledger) const {
  std::map<int32_t, AuxDemand> free;  // of every server the reverted peers span, after the revert
  for (size_t k = 0; k < reverted; ++k) {
    const Placed& peer = placed_[peers[k]];
    for (const PlacementPart& p : peer.placement.parts) {
      auto [it, fresh] = free.try_emplace(p.server);
      if (fresh) it->second = {ledger.free(p.server).cpus, ledger.free(p.server).memory_gb};
      const AuxDemand share = ShareOfPart(demands, peer, p);
      it->second.cpus += p.cpus - share.cpus;
      it->second.memory_gb += p.memory_gb - share.memory_gb;
    }
  }
  return std::all_of(free.begin(), free.end(), [](const auto& entry) {
    return entry.second.cpus >= -kDemandSlack && entry.second.memory_gb >= -kDemandSlack;
  });
}

void SynergySimMechanism::Commit(const RoundDemands::Job& job, PlacementParts parts,
                                 ClusterLedger& ledger) {
  const auto index = static_cast<int32_t>(placed_.size());
  for (const PlacementPart& p : parts) {
    ledger.Take(p.server, p.gpus, p.cpus, p.memory_gb);
    index_.Update(ledger, p.server);
    on_server_[p.server].push_back(index);
  }
  placed_.push_back(Placed{job, JobPlacement{job.id, std::move(parts), job.job}});
}

namespace {

template <SynergySimMechanism::Kind kKind, bool kPickedFirst>
std::unique_ptr<Mechanism> Make(const MechanismOptions& options) {
  return std::make_unique<SynergySimMechanism>(kKind, kPickedFirst, options);
}

using Kind = SynergySimMechanism::Kind;
const MechanismRegistrar kGreedy({
    .name = "greedy_synergy_sim",
    .summary = "GREEDY as Synergy's simulator codes it (its FIFO, SRTF, FTF)",
    .make = Make<Kind::kGreedy, false>,
    .reads_until_full = true,
});
const MechanismRegistrar kGreedyLas({
    .name = "greedy_synergy_sim_las",
    .summary = "GREEDY as Synergy's LAS runs it: GPUs picked first, idle where CPUs do not fit",
    .make = Make<Kind::kGreedy, true>,
});
const MechanismRegistrar kTune({
    .name = "tune_synergy_sim",
    .summary = "TUNE as Synergy's simulator codes it (its FIFO, SRTF, FTF)",
    .make = Make<Kind::kTune, false>,
    .reads_until_full = true,
});
const MechanismRegistrar kTuneLas({
    .name = "tune_synergy_sim_las",
    .summary = "TUNE as Synergy's LAS runs it: GPUs picked first, most GPUs placed first",
    .make = Make<Kind::kTune, true>,
    .reads_until_full = true,
});

}  // namespace

}  // namespace troupe::scheduling
