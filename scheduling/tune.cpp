#include "scheduling/tune.hpp"

#include <algorithm>
#include <tuple>

#include "scheduling/gpu_placement.hpp"
#include "scheduling/mechanism_registry.hpp"
#include "scheduling/rack_placement.hpp"

namespace troupe::scheduling {
namespace {

using tune_detail::Rank;

// A job without an ideal in a dimension ranks by the proportional share of server 0.
// Each job's demands are prepared as the policy's order is read (they depend on the job and the
// servers' shapes, not on what is placed before it): a large round reads each job's entry once.
Rank RankOf(const QueuedJob& j, size_t order, const ClusterLedger& ledger,
            const RoundDemands& demands) {
  const double cpus =
      j.ideal_cpus_per_gpu > 0 ? j.ideal_cpus_per_gpu : ledger.ProportionalCpus(0, 1);
  const double memory =
      j.ideal_memory_gb_per_gpu > 0 ? j.ideal_memory_gb_per_gpu : ledger.ProportionalMemoryGb(0, 1);
  return Rank{j.gpus, cpus, memory, order, demands.Prepare(j), j.owner};
}

// Jobs handed as SchedJobs are read a few ahead of their turn (their entries are scattered over
// the owner's heap): the lines of their size and of their ideal demands.
constexpr size_t kPrefetchAhead = 8;
void Prefetch(const SchedJob* job) {
  __builtin_prefetch(&job->id);
  __builtin_prefetch(&job->sensitivity);  // the same line where the entry's block is aligned
}

bool PlacedBefore(const Rank& a, const Rank& b) {
  return std::tie(b.gpus, b.cpus, b.memory_gb, a.order) <
         std::tie(a.gpus, a.cpus, a.memory_gb, b.order);
}

}  // namespace

std::vector<JobPlacement> TuneMechanism::PlaceRound(const std::vector<const SchedJob*>& ordered,
                                                    ClusterLedger& ledger) {
  return PlaceInOrder(ordered.size(), ledger, [&ordered](size_t i) {
    if (i + kPrefetchAhead < ordered.size()) Prefetch(ordered[i + kPrefetchAhead]);
    return QueuedJobOf(*ordered[i]);
  });
}

std::vector<JobPlacement> TuneMechanism::PlaceHead(const std::vector<QueuedJob>& head,
                                                   ClusterLedger& ledger) {
  return PlaceInOrder(head.size(), ledger,
                      [&head](size_t i) -> const QueuedJob& { return head[i]; });
}

template <class JobAt>
std::vector<JobPlacement> TuneMechanism::PlaceInOrder(size_t jobs, ClusterLedger& ledger,
                                                      const JobAt& job_at) {
  index_.Reset(ledger);
  placements_.clear();
  refs_.clear();
  head_.assign(ledger.server_count(), -1);
  if (ledger.server_count() == 0) return {};
  const RoundDemands demands(ledger);
  // The runnable set: GPUs only, skip-and-continue, in the policy's order. Placing a job leaves
  // the free-GPU count as the set's selection has it (every runnable job is placed), so in the
  // policy's order each job is placed as it is selected.
  std::vector<Rank>& runnable = runnable_;
  runnable.clear();
  int32_t gpus_left = ledger.free_gpus();
  for (size_t i = 0; i < jobs && gpus_left > 0; ++i) {
    const QueuedJob& job = job_at(i);
    if (job.gpus <= 0 || job.gpus > gpus_left) continue;
    gpus_left -= job.gpus;
    if (sort_by_demand_) {
      runnable.push_back(RankOf(job, i, ledger, demands));
    } else {
      // A job the wait-or-spread rule holds back leaves its GPUs to the jobs after it.
      if (!PlaceJob(demands, demands.Prepare(job), job.owner, ledger)) gpus_left += job.gpus;
    }
  }
  if (!sort_by_demand_) return std::move(placements_);
  std::sort(runnable.begin(), runnable.end(), PlacedBefore);
  placements_.reserve(runnable.size());  // storage Recycle gave back, or one allocation
  // Each job's rank holds what its placement reads (one GPU type): its entry is not read again.
  for (const Rank& rank : runnable) PlaceJob(demands, rank.prepared, rank.owner, ledger);
  return std::move(placements_);
}

void TuneMechanism::Recycle(std::vector<JobPlacement>&& placements) {
  placements_ = std::move(placements);
  placements_.clear();
}

bool TuneMechanism::PlaceJob(const RoundDemands& demands, const RoundDemands::Job& job, void* owner,
                             ClusterLedger& ledger) {
  // Built where it is kept (Consolidate says why); MakeRoom reads only placements already filed.
  JobPlacement& placement = placements_.emplace_back();
  placement.job_id = job.id;
  placement.job = job.job;
  placement.owner = owner;
  if (ledger.type_count() > 1) {
    // Several GPU types: the ideal, else the fallback share, on the job's fastest type that
    // holds it (docs/heterogeneity.md); one type keeps the search below exactly.
    const auto ideal = [&](int32_t s, int32_t g) { return demands.Ideal(job, s, g); };
    const auto fallback = [&](int32_t s, int32_t g) { return demands.Fallback(job, s, g); };
    placement.parts = PlaceGpusByType(ledger, *job.job, ideal);
    if (placement.parts.empty()) placement.parts = PlaceGpusByType(ledger, *job.job, fallback);
  }
  if (placement.parts.empty()) {
    if (ledger.SomeServerHasFreeGpus(job.gpus)) {
      Consolidate(demands, job, ledger, placement.parts.emplace_back());
    } else {
      placement.parts = Spread(demands, job, ledger);
      if (placement.parts.empty()) {  // held back by the wait-or-spread rule
        placements_.pop_back();
        return false;
      }
    }
  }
  Record(ledger);
  return true;
}

void TuneMechanism::Consolidate(const RoundDemands& demands, const RoundDemands::Job& job,
                                ClusterLedger& ledger, PlacementPart& part) {
  const int32_t gpus = job.gpus;
  const auto ideal = [&](int32_t s, int32_t g) { return demands.Ideal(job, s, g); };
  const auto fallback = [&](int32_t s, int32_t g) { return demands.Fallback(job, s, g); };
  int32_t server = index_.Find(ledger, gpus, demands.IdealBound(job), ideal, job.ideal_question);
  AuxDemand aux;
  if (server >= 0) {
    aux = ideal(server, gpus);
  } else {
    if (job.above) {
      server =
          index_.Find(ledger, gpus, demands.FallbackBound(job), fallback, job.fallback_question);
    }
    if (server < 0) {
      server = BestFitGpus(ledger, gpus);
      MakeRoom(demands, server, gpus, fallback(server, gpus), ledger);
    }
    aux = fallback(server, gpus);
  }
  part.server = server;
  part.gpus = gpus;
  part.cpus = aux.cpus;
  part.memory_gb = aux.memory_gb;
}

PlacementParts TuneMechanism::Spread(const RoundDemands& demands, const RoundDemands::Job& job,
                                     ClusterLedger& ledger) {
  PlacementParts parts = SpreadGpus(ledger, job.gpus, job.job);
  if (!MaySpread(ledger, *job.job, parts)) return {};
  bool ideal_fits = true;
  for (PlacementPart& p : parts) {
    const AuxDemand aux = demands.Ideal(job, p.server, p.gpus);
    p.cpus = aux.cpus;
    p.memory_gb = aux.memory_gb;
    ideal_fits = ideal_fits && ledger.Fits(p.server, p.gpus, p.cpus, p.memory_gb);
  }
  if (ideal_fits) return parts;
  // The job runs at its slowest part: all parts fall back together.
  for (PlacementPart& p : parts) {
    const AuxDemand aux = demands.Fallback(job, p.server, p.gpus);
    p.cpus = aux.cpus;
    p.memory_gb = aux.memory_gb;
    if (!ledger.Fits(p.server, p.gpus, p.cpus, p.memory_gb)) {
      MakeRoom(demands, p.server, p.gpus, aux, ledger);
    }
  }
  return parts;
}

void TuneMechanism::MakeRoom(const RoundDemands& demands, int32_t server, int32_t gpus,
                             const AuxDemand& need, ClusterLedger& ledger) {
  std::vector<Candidate>& candidates = candidates_;
  candidates.clear();
  for (int32_t r = head_[server]; r >= 0; r = refs_[r].next) {
    JobPlacement& holder = placements_[refs_[r].placement];
    PlacementPart& part = holder.parts[refs_[r].part];
    const AuxDemand share = demands.Proportional(server, part.gpus);
    if (AboveShare(AuxDemand{part.cpus, part.memory_gb}, share)) {
      candidates.push_back({&part, share, holder.parts.size(), refs_[r].placement});
    }
  }
  const auto key = [](const Candidate& c) {
    return std::make_tuple(c.spans, -c.part->cpus / c.part->gpus, -c.part->memory_gb / c.part->gpus,
                           c.placement);
  };
  std::sort(candidates.begin(), candidates.end(),
            [&key](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
  // Chooses, in that order, the parts whose excess helps a dimension still short, until the job
  // fits; a part above in one dimension may be below in the other, so this can take passes.
  double free_cpus = ledger.free(server).cpus;
  double free_memory = ledger.free(server).memory_gb;
  const auto short_cpus = [&] { return need.cpus > free_cpus + kDemandSlack; };
  const auto short_memory = [&] { return need.memory_gb > free_memory + kDemandSlack; };
  std::vector<char>& chosen = chosen_;
  chosen.assign(candidates.size(), 0);
  for (bool progress = true; (short_cpus() || short_memory()) && progress;) {
    progress = false;
    for (size_t i = 0; i < candidates.size() && (short_cpus() || short_memory()); ++i) {
      const Candidate& c = candidates[i];
      const bool helps = (short_cpus() && c.part->cpus > c.share.cpus + kDemandSlack) ||
                         (short_memory() && c.part->memory_gb > c.share.memory_gb + kDemandSlack);
      if (chosen[i] || !helps) continue;
      chosen[i] = 1;
      progress = true;
      free_cpus += c.part->cpus - c.share.cpus;
      free_memory += c.part->memory_gb - c.share.memory_gb;
    }
  }
  // Every part from the ledger at once, then its share, so a part above in one dimension and
  // below in the other never overdraws the server in between.
  const auto revert = [&] {
    for (size_t i = 0; i < candidates.size(); ++i) {
      const PlacementPart& p = *candidates[i].part;
      if (chosen[i] && AboveShare(AuxDemand{p.cpus, p.memory_gb}, candidates[i].share)) {
        ledger.Give(server, 0, p.cpus, p.memory_gb);
      }
    }
    for (size_t i = 0; i < candidates.size(); ++i) {
      PlacementPart& p = *candidates[i].part;
      if (chosen[i] && AboveShare(AuxDemand{p.cpus, p.memory_gb}, candidates[i].share)) {
        ledger.Take(server, 0, candidates[i].share.cpus, candidates[i].share.memory_gb);
        p.cpus = candidates[i].share.cpus;
        p.memory_gb = candidates[i].share.memory_gb;
      }
    }
  };
  // All of them where that was not enough (or a rounding error says so): every part at most at
  // its share leaves the share of every free GPU.
  if (short_cpus() || short_memory()) std::fill(chosen.begin(), chosen.end(), 1);
  revert();
  if (!ledger.Fits(server, gpus, need.cpus, need.memory_gb)) {
    std::fill(chosen.begin(), chosen.end(), 1);
    revert();
  }
  index_.Update(ledger, server);
}

void TuneMechanism::Record(ClusterLedger& ledger) {
  const auto index = static_cast<int32_t>(placements_.size()) - 1;
  const PlacementParts& parts = placements_.back().parts;
  for (size_t k = 0; k < parts.size(); ++k) {
    const PlacementPart& p = parts[k];
    ledger.Take(p.server, p.gpus, p.cpus, p.memory_gb);
    index_.Update(ledger, p.server);
    refs_.push_back(PartRef{index, static_cast<int32_t>(k), head_[p.server]});
    head_[p.server] = static_cast<int32_t>(refs_.size()) - 1;
  }
}

namespace {

std::unique_ptr<Mechanism> MakeTune(const MechanismOptions& options) {
  return std::make_unique<TuneMechanism>(options.tune_sort_by_demand);
}

const MechanismRegistrar kTuneRegistrar({
    .name = "tune",
    .summary = "ideal demand where it fits, else the share (Synergy-TUNE)",
    .make = MakeTune,
    .reads_until_full = true,
});

}  // namespace

}  // namespace troupe::scheduling
