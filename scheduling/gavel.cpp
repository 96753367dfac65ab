#include "scheduling/gavel.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>

#include "scheduling/gpu_placement.hpp"
#include "scheduling/mechanism_registry.hpp"
#include "scheduling/rack_placement.hpp"

namespace troupe::scheduling {
namespace {

// GPUs free on each type at the start of the round (a dead server's are already taken).
std::vector<int32_t> FreeGpusOfType(const ClusterLedger& ledger) {
  std::vector<int32_t> free(ledger.type_count(), 0);
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    free[ledger.shape(s).gpu_type] += ledger.free(s).gpus;
  }
  return free;
}

// The heterogeneity-agnostic allocation: the program over one pool of all the GPUs, each job's
// share then spread over the types in proportion to their GPUs (of the types wide enough for it),
// as a scheduler blind to types would spread it on average.
GavelAllocation PooledAllocation(GavelObjective objective, const std::vector<GavelJob>& jobs,
                                 const std::vector<int32_t>& free) {
  int32_t total = 0;
  for (int32_t gpus : free) total += gpus;
  GavelAllocation pooled = GavelAllocate(objective, jobs, {total});
  GavelAllocation out{pooled.solved, {}, pooled.objective};
  for (size_t j = 0; j < jobs.size(); ++j) {
    std::vector<double> row(free.size(), 0);
    int32_t wide_enough = 0;
    for (int32_t gpus : free) wide_enough += gpus >= jobs[j].gpus ? gpus : 0;
    for (size_t t = 0; t < free.size() && wide_enough > 0; ++t) {
      if (free[t] < jobs[j].gpus || j >= pooled.x.size()) continue;
      row[t] = pooled.x[j][0] * free[t] / wide_enough;
    }
    out.x.push_back(std::move(row));
  }
  return out;
}

}  // namespace

GavelMechanism::GavelMechanism(GavelObjective objective, bool heterogeneity_aware, double round_s)
    : objective_(objective), aware_(heterogeneity_aware), round_s_(round_s) {}

double GavelMechanism::EstimateNow(const std::vector<const SchedJob*>& ordered) {
  double now = now_s_ < 0 ? 0 : now_s_ + round_s_;
  for (const SchedJob* job : ordered) now = std::max({now, job->arrival_s, job->last_served_s});
  now_s_ = now;
  return now;
}

std::vector<GavelJob> GavelMechanism::ProgramJobs(const std::vector<const SchedJob*>& ordered,
                                                  int32_t types) const {
  std::vector<GavelJob> jobs;
  jobs.reserve(ordered.size());
  for (const SchedJob* job : ordered) {
    GavelJob g;
    g.gpus = job->gpus;
    const double per_second = job->iter_time_s > 0 ? 1 / job->iter_time_s : 1;
    for (int32_t t = 0; t < types; ++t) {
      g.throughput.push_back(per_second * (aware_ ? job->TypeSpeed(t) : 1));
    }
    g.elapsed_s = std::max(0.0, now_s_ - job->arrival_s);
    g.remaining_iterations = static_cast<double>(job->iterations_left);
    jobs.push_back(std::move(g));
  }
  return jobs;
}

std::vector<GavelMechanism::Candidate> GavelMechanism::Candidates(
    const std::vector<const SchedJob*>& ordered, int32_t types) const {
  std::vector<Candidate> out;
  for (size_t j = 0; j < ordered.size(); ++j) {
    const auto it = history_.find(ordered[j]->id);
    for (int32_t t = 0; t < types; ++t) {
      Candidate c{j, t, false, 0, allocation_.x[j][t]};
      const int64_t offered = it == history_.end() ? 0 : it->second.rounds_offered;
      const int64_t on = it == history_.end() ? 0 : it->second.rounds_on[t];
      if (c.x > 0 && on == 0) {
        c.unserved = true;
      } else if (c.x > 0) {
        c.priority = c.x / (static_cast<double>(on) / static_cast<double>(offered));
      }
      out.push_back(c);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(b.unserved, b.priority, b.x, a.job, a.type) <
           std::tie(a.unserved, a.priority, a.x, b.job, b.type);
  });
  return out;
}

void GavelMechanism::Remember(const std::vector<const SchedJob*>& ordered,
                              const std::vector<int32_t>& type_of, int32_t types) {
  absl::flat_hash_map<int64_t, History> kept;
  for (size_t j = 0; j < ordered.size(); ++j) {
    History h = std::move(history_[ordered[j]->id]);
    h.rounds_on.resize(types, 0);
    ++h.rounds_offered;
    if (type_of[j] >= 0) ++h.rounds_on[type_of[j]];
    kept.emplace(ordered[j]->id, std::move(h));
  }
  history_ = std::move(kept);  // a job no longer offered (finished) is forgotten
}

std::string GavelMechanism::WhyNeverPlaced(int32_t gpus, const SurvivingGpus& surviving) const {
  if (std::string why = Mechanism::WhyNeverPlaced(gpus, surviving); !why.empty()) return why;
  const int32_t widest =
      surviving.of_type.empty() ? 0 : *std::ranges::max_element(surviving.of_type);
  if (gpus <= widest) return "";
  // Worded apart from a job wider than what survives in all (kNoLongerFits): this one is not.
  std::string why =
      std::string("gavel_") + (objective_ == GavelObjective::kMaxMinFairness ? "las" : "ftf") +
      (aware_ ? "" : "_agnostic") + " places a job on one GPU type, and the most of one type is " +
      std::to_string(widest);
  if (surviving.servers_lost > 0) {
    why += " (" + std::to_string(surviving.servers_lost) + " of " +
           std::to_string(surviving.servers) + " servers lost for good; " +
           std::to_string(surviving.total) + " GPUs survive in all)";
  }
  return why;
}

std::vector<JobPlacement> GavelMechanism::PlaceRound(const std::vector<const SchedJob*>& ordered,
                                                     ClusterLedger& ledger) {
  const int32_t types = ledger.type_count();
  EstimateNow(ordered);
  const std::vector<int32_t> free = FreeGpusOfType(ledger);
  allocation_ = aware_ ? GavelAllocate(objective_, ProgramJobs(ordered, types), free)
                       : PooledAllocation(objective_, ProgramJobs(ordered, 1), free);
  if (allocation_.x.size() != ordered.size()) allocation_.x.assign(ordered.size(), {});
  for (std::vector<double>& row : allocation_.x) row.resize(types, 0);
  const AuxDemandFn proportional = [&ledger](int32_t server, int32_t gpus) {
    return AuxDemand{ledger.ProportionalCpus(server, gpus),
                     ledger.ProportionalMemoryGb(server, gpus)};
  };
  std::vector<int32_t> type_of(ordered.size(), -1);
  std::vector<JobPlacement> placements;
  for (const Candidate& c : Candidates(ordered, types)) {
    if (ledger.free_gpus() == 0) break;
    if (type_of[c.job] >= 0) continue;
    const SchedJob& job = *ordered[c.job];
    PlacementParts parts = PlaceGpus(ledger, job.gpus, proportional, c.type, &job);
    if (parts.empty() || !MaySpread(ledger, job, parts)) continue;
    for (const PlacementPart& p : parts) ledger.Take(p.server, p.gpus, p.cpus, p.memory_gb);
    type_of[c.job] = c.type;
    placements.push_back(JobPlacement{job.id, std::move(parts), &job});
  }
  Remember(ordered, type_of, types);
  return placements;
}

namespace {

template <GavelObjective kObjective, bool kAware>
std::unique_ptr<Mechanism> Make(const MechanismOptions& options) {
  return std::make_unique<GavelMechanism>(kObjective, kAware, options.round_s);
}

const MechanismRegistrar kLas({
    .name = "gavel_las",
    .summary = "Gavel: max-min fairness over effective throughput on each GPU type, in rounds",
    .make = Make<GavelObjective::kMaxMinFairness, true>,
    .proportional_share_only = true,
});
const MechanismRegistrar kFtf({
    .name = "gavel_ftf",
    .summary = "Gavel: finish-time fairness over effective throughput on each GPU type, in rounds",
    .make = Make<GavelObjective::kFinishTimeFairness, true>,
    .proportional_share_only = true,
});
const MechanismRegistrar kLasAgnostic({
    .name = "gavel_las_agnostic",
    .summary = "Gavel's max-min fairness blind to GPU types (the paper's baseline LAS)",
    .make = Make<GavelObjective::kMaxMinFairness, false>,
    .proportional_share_only = true,
});
const MechanismRegistrar kFtfAgnostic({
    .name = "gavel_ftf_agnostic",
    .summary = "Gavel's finish-time fairness blind to GPU types (the paper's baseline FTF)",
    .make = Make<GavelObjective::kFinishTimeFairness, false>,
    .proportional_share_only = true,
});

}  // namespace

}  // namespace troupe::scheduling
