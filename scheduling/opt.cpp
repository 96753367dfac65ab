#include "scheduling/opt.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "scheduling/gpu_placement.hpp"
#include "scheduling/mechanism_registry.hpp"
#include "scheduling/opt_lp.hpp"
#include "scheduling/opt_round.hpp"

namespace troupe::scheduling {
namespace {

// Constraint (5) gives way by this much (relative), so that a fair share reached exactly is not
// refused for a rounding error; a mix weight above kUsed counts as a point the job uses.
constexpr double kFairSlack = 1e-9;
constexpr double kUsed = 1e-9;

using opt_detail::GridPoint;
using opt_detail::OptJob;
using Points = std::shared_ptr<const std::vector<GridPoint>>;

bool AllFinite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// A matrix the LP can use; anything else is treated as insensitive (throughput 1 everywhere).
bool Usable(const SensitivityMatrix* w) {
  return w != nullptr && !w->cpu_grid.empty() && !w->memory_grid.empty() &&
         w->values.size() == w->cpu_grid.size() * w->memory_grid.size() && AllFinite(w->cpu_grid) &&
         AllFinite(w->memory_grid) && AllFinite(w->values) && w->cpu_grid.front() >= 0 &&
         w->memory_grid.front() >= 0;
}

// a is at least as fast as b for no more of either resource, and better in one of the three.
bool Dominates(const GridPoint& a, const GridPoint& b) {
  return a.cpus <= b.cpus && a.memory_gb <= b.memory_gb && a.value >= b.value &&
         (a.cpus < b.cpus || a.memory_gb < b.memory_gb || a.value > b.value);
}

std::vector<GridPoint> UndominatedPoints(const SensitivityMatrix& w) {
  std::vector<GridPoint> all;
  for (size_t c = 0; c < w.cpu_grid.size(); ++c) {
    for (size_t m = 0; m < w.memory_grid.size(); ++m) {
      all.push_back({w.cpu_grid[c], w.memory_grid[m], w.at_index(c, m)});
    }
  }
  std::vector<GridPoint> kept;
  for (const GridPoint& p : all) {
    const auto beats_p = [&p](const GridPoint& q) { return Dominates(q, p); };
    if (std::none_of(all.begin(), all.end(), beats_p)) kept.push_back(p);
  }
  return kept;
}

// GPU-only skip-and-continue selection; takes each chosen job's GPUs (and nothing else) now.
std::vector<OptJob> SelectRunnable(const std::vector<const SchedJob*>& ordered,
                                   ClusterLedger& ledger) {
  const AuxDemandFn gpus_only = [](int32_t, int32_t) { return AuxDemand{}; };
  std::vector<OptJob> jobs;
  for (const SchedJob* job : ordered) {
    if (ledger.free_gpus() == 0) break;
    PlacementParts parts = PlaceGpusByType(ledger, *job, gpus_only);
    if (parts.empty()) continue;  // not this round; the next job may still fit
    for (const PlacementPart& p : parts) ledger.Take(p.server, p.gpus, 0, 0);
    OptJob r;
    r.job = job;
    r.parts = std::move(parts);
    r.gpus = job->gpus;
    jobs.push_back(std::move(r));
  }
  return jobs;
}

// The job's proportional point, W_j there and its grid points (shared per matrix).
void Describe(const ClusterLedger& ledger, std::map<const SensitivityMatrix*, Points>& cache,
              OptJob& r) {
  double cpus = 0, memory_gb = 0;
  for (const PlacementPart& p : r.parts) {
    cpus += ledger.ProportionalCpus(p.server, p.gpus);
    memory_gb += ledger.ProportionalMemoryGb(p.server, p.gpus);
  }
  r.fair = GridPoint{cpus / r.gpus, memory_gb / r.gpus, 1};
  const SensitivityMatrix* w = r.job->sensitivity.get();
  if (!Usable(w)) {
    r.points = std::make_shared<const std::vector<GridPoint>>(1, r.fair);
    return;
  }
  r.fair.value = w->At(r.fair.cpus, r.fair.memory_gb);
  r.matrix = w;
  Points& points = cache[w];
  if (!points) points = std::make_shared<const std::vector<GridPoint>>(UndominatedPoints(*w));
  r.points = points;
}

// The job's mix columns, its row (4) sum y = 1 and, where some point is below it, its row (5).
void AddMix(LinearProgram& lp, OptJob& r) {
  const int convex = lp.AddRow(1, 1);
  const double fair = r.fair.value - kFairSlack * std::max(1.0, std::fabs(r.fair.value));
  const bool binds = std::any_of(r.points->begin(), r.points->end(),
                                 [fair](const GridPoint& p) { return p.value < fair; });
  const int fair_row = binds ? lp.AddRow(fair, kLpInfinity) : -1;
  r.first_column = lp.columns();
  for (const GridPoint& p : *r.points) {
    const int column = lp.AddColumn(p.value, 0, 1);
    lp.Set(convex, column, 1);
    if (fair_row >= 0 && p.value != 0) lp.Set(fair_row, column, p.value);
  }
}

// The job's CPUs and memory (c g_j y, m g_j y) into the given rows.
void AddUse(LinearProgram& lp, const OptJob& r, int cpu_row, int memory_row) {
  for (size_t k = 0; k < r.points->size(); ++k) {
    const GridPoint& p = (*r.points)[k];
    const int column = r.first_column + static_cast<int>(k);
    if (p.cpus != 0) lp.Set(cpu_row, column, p.cpus * r.gpus);
    if (p.memory_gb != 0) lp.Set(memory_row, column, p.memory_gb * r.gpus);
  }
}

// LP 1: every free CPU and GB on one super-machine.
LinearProgram BoundLp(std::vector<OptJob>& jobs, const ClusterLedger& ledger) {
  double cpus = 0, memory_gb = 0;
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    cpus += std::max(0.0, ledger.free(s).cpus);
    memory_gb += std::max(0.0, ledger.free(s).memory_gb);
  }
  LinearProgram lp;
  const int cpu_row = lp.AddRow(-kLpInfinity, cpus);
  const int memory_row = lp.AddRow(-kLpInfinity, memory_gb);
  for (OptJob& r : jobs) {
    AddMix(lp, r);
    AddUse(lp, r, cpu_row, memory_row);
  }
  return lp;
}

// LP 2: each job's CPUs and memory from the servers holding its GPUs.
LinearProgram MappingLp(std::vector<OptJob>& jobs, const ClusterLedger& ledger) {
  LinearProgram lp;
  std::vector<int> cpu_row(ledger.server_count(), -1), memory_row(ledger.server_count(), -1);
  const auto rows_of = [&](int32_t s) {
    if (cpu_row[s] >= 0) return;
    cpu_row[s] = lp.AddRow(-kLpInfinity, std::max(0.0, ledger.free(s).cpus));
    memory_row[s] = lp.AddRow(-kLpInfinity, std::max(0.0, ledger.free(s).memory_gb));
  };
  for (OptJob& r : jobs) {
    AddMix(lp, r);
    if (r.parts.size() == 1) {
      rows_of(r.parts[0].server);
      AddUse(lp, r, cpu_row[r.parts[0].server], memory_row[r.parts[0].server]);
      continue;
    }
    // A spread job: its totals, split into one CPU and one memory column per part.
    const int cpu_link = lp.AddRow(0, 0);
    const int memory_link = lp.AddRow(0, 0);
    AddUse(lp, r, cpu_link, memory_link);
    r.first_part_column = lp.columns();
    for (const PlacementPart& p : r.parts) {
      rows_of(p.server);
      const int cpus = lp.AddColumn(0, 0, kLpInfinity);
      const int memory_gb = lp.AddColumn(0, 0, kLpInfinity);
      lp.Set(cpu_link, cpus, -1);
      lp.Set(cpu_row[p.server], cpus, 1);
      lp.Set(memory_link, memory_gb, -1);
      lp.Set(memory_row[p.server], memory_gb, 1);
    }
  }
  return lp;
}

struct Mix {
  double value = 0;
  double cpus = 0;  // the job's totals
  double memory_gb = 0;
  int points = 0;
};

Mix ReadMix(const OptJob& r, const std::vector<double>& x) {
  Mix mix;
  for (size_t k = 0; k < r.points->size(); ++k) {
    const GridPoint& p = (*r.points)[k];
    const double y = std::max(0.0, x[r.first_column + k]);
    mix.value += y * p.value;
    mix.cpus += y * p.cpus * r.gpus;
    mix.memory_gb += y * p.memory_gb * r.gpus;
    if (y > kUsed) ++mix.points;
  }
  return mix;
}

// LP 2's plan for each part, and each job's mapped value; false when LP 2 has no optimum.
bool PlanMapping(std::vector<OptJob>& jobs, const ClusterLedger& ledger, double time_limit_s,
                 std::vector<OptJobOutcome>& outcomes, double* objective) {
  const LpSolution mapped = MappingLp(jobs, ledger).Maximize(time_limit_s);
  if (mapped.status != LpStatus::kOptimal) return false;
  *objective = mapped.objective;
  for (size_t j = 0; j < jobs.size(); ++j) {
    OptJob& r = jobs[j];
    const Mix mix = ReadMix(r, mapped.values);
    outcomes[j].mapped_value = r.value = mix.value;
    outcomes[j].mix_points = r.mix_points = mix.points;
    if (r.parts.size() == 1) {
      r.parts[0].cpus = mix.cpus;
      r.parts[0].memory_gb = mix.memory_gb;
      continue;
    }
    for (size_t p = 0; p < r.parts.size(); ++p) {
      r.parts[p].cpus = std::max(0.0, mapped.values[r.first_part_column + 2 * p]);
      r.parts[p].memory_gb = std::max(0.0, mapped.values[r.first_part_column + 2 * p + 1]);
    }
  }
  return true;
}

void PlanProportional(std::vector<OptJob>& jobs, const ClusterLedger& ledger) {
  for (OptJob& r : jobs) {
    for (PlacementPart& p : r.parts) {
      p.cpus = ledger.ProportionalCpus(p.server, p.gpus);
      p.memory_gb = ledger.ProportionalMemoryGb(p.server, p.gpus);
    }
    r.value = r.fair.value;
  }
}

// Takes the part's planned CPUs and memory, cut to what its server has free.
void Lease(ClusterLedger& ledger, PlacementPart& part) {
  const ServerShape& free = ledger.free(part.server);
  part.cpus = std::clamp(part.cpus, 0.0, std::max(0.0, free.cpus));
  part.memory_gb = std::clamp(part.memory_gb, 0.0, std::max(0.0, free.memory_gb));
  ledger.Take(part.server, 0, part.cpus, part.memory_gb);
}

}  // namespace

bool OptMechanism::Solve(std::vector<opt_detail::OptJob>& jobs, const ClusterLedger& ledger) {
  const LpSolution bound = BoundLp(jobs, ledger).Maximize(options_.time_limit_s);
  if (bound.status != LpStatus::kOptimal) return false;
  last_objective_ = bound.objective;
  for (size_t j = 0; j < jobs.size(); ++j) {
    last_jobs_[j].bound_value = ReadMix(jobs[j], bound.values).value;
  }
  if (!PlanMapping(jobs, ledger, options_.time_limit_s, last_jobs_, &last_mapped_objective_)) {
    return false;
  }
  last_reset_jobs_ = opt_detail::RoundToPoints(jobs, ledger);
  opt_detail::TopUp(jobs, ledger);
  return true;
}

std::vector<JobPlacement> OptMechanism::PlaceRound(const std::vector<const SchedJob*>& ordered,
                                                   ClusterLedger& ledger) {
  std::vector<OptJob> jobs = SelectRunnable(ordered, ledger);
  std::map<const SensitivityMatrix*, Points> cache;
  last_jobs_.assign(jobs.size(), OptJobOutcome{});
  double fair_total = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    Describe(ledger, cache, jobs[j]);
    last_jobs_[j].job_id = jobs[j].job->id;
    last_jobs_[j].gpus = jobs[j].gpus;
    last_jobs_[j].fair_value = jobs[j].fair.value;
    fair_total += jobs[j].fair.value;
  }
  last_objective_ = last_mapped_objective_ = fair_total;
  last_reset_jobs_ = 0;
  last_fell_back_ = !jobs.empty() && !Solve(jobs, ledger);
  if (last_fell_back_) {
    ++fallback_rounds_;
    last_mapped_objective_ = fair_total;
    PlanProportional(jobs, ledger);
  }

  std::vector<JobPlacement> placements;
  last_placed_objective_ = 0;
  last_fragmented_jobs_ = last_fractional_jobs_ = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (PlacementPart& p : jobs[j].parts) Lease(ledger, p);
    placements.push_back(JobPlacement{jobs[j].job->id, std::move(jobs[j].parts), jobs[j].job});
    OptJobOutcome& out = last_jobs_[j];
    out.placed_value = jobs[j].value;
    out.cpus = placements.back().cpus();
    out.memory_gb = placements.back().memory_gb();
    last_placed_objective_ += out.placed_value;
    if (placements.back().parts.size() > 1) ++last_fragmented_jobs_;
    if (!last_fell_back_ && out.mix_points > 1) ++last_fractional_jobs_;
  }
  return placements;
}

namespace {

std::unique_ptr<Mechanism> MakeOpt(const MechanismOptions&) {
  return std::make_unique<OptMechanism>();
}

const MechanismRegistrar kOptRegistrar({
    .name = "opt",
    .summary = "two LPs, then rounding (Synergy-OPT, GLPK)",
    .make = MakeOpt,
});

}  // namespace

}  // namespace troupe::scheduling
