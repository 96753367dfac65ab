#include "scheduling/gavel_lp.hpp"

#include <algorithm>
#include <numeric>

#include "scheduling/opt_lp.hpp"

namespace troupe::scheduling {
namespace {

int32_t TotalGpus(const std::vector<int32_t>& gpus_of_type) {
  return std::accumulate(gpus_of_type.begin(), gpus_of_type.end(), 0);
}

// Job j's throughput on an average GPU of the cluster, times `share` of its time.
double AverageThroughput(const GavelJob& job, const std::vector<int32_t>& gpus_of_type,
                         double share) {
  const double total = TotalGpus(gpus_of_type);
  double sum = 0;
  for (size_t t = 0; t < gpus_of_type.size() && t < job.throughput.size(); ++t) {
    sum += job.throughput[t] * gpus_of_type[t] / total;
  }
  return sum * share;
}

double EqualShareFraction(const std::vector<GavelJob>& jobs,
                          const std::vector<int32_t>& gpus_of_type) {
  double demand = 0;
  for (const GavelJob& j : jobs) demand += j.gpus;
  return demand <= 0 ? 1 : std::min(1.0, TotalGpus(gpus_of_type) / demand);
}

// The allocation program's columns X[j][t] and its row and type constraints; the objective and
// the per-job rows are added by the caller.
struct Program {
  LinearProgram lp;
  std::vector<std::vector<int>> column;  // [job][type]
};

double Throughput(const GavelJob& job, size_t type) {
  return type < job.throughput.size() ? job.throughput[type] : 0;
}

// With `norm`, the objective is the sum of normalised throughputs; without, it is left to the
// caller's own columns.
Program BaseProgram(const std::vector<GavelJob>& jobs, const std::vector<int32_t>& gpus_of_type,
                    const std::vector<double>* norm) {
  Program p;
  const size_t types = gpus_of_type.size();
  p.column.assign(jobs.size(), std::vector<int>(types, -1));
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (size_t t = 0; t < types; ++t) {
      // A job wider than a type's GPUs never runs there.
      const double upper = jobs[j].gpus <= gpus_of_type[t] ? 1 : 0;
      const double weight = norm ? Throughput(jobs[j], t) / (*norm)[j] : 0;
      p.column[j][t] = p.lp.AddColumn(weight, 0, upper);
    }
    const int row = p.lp.AddRow(-kLpInfinity, 1);  // at most all of its time
    for (size_t t = 0; t < types; ++t) p.lp.Set(row, p.column[j][t], 1);
  }
  for (size_t t = 0; t < types; ++t) {
    const int row = p.lp.AddRow(-kLpInfinity, gpus_of_type[t]);
    for (size_t j = 0; j < jobs.size(); ++j) p.lp.Set(row, p.column[j][t], jobs[j].gpus);
  }
  return p;
}

// Normalised throughputs: each job's over its throughput on an average GPU (1 where that is 0).
std::vector<double> Norms(const std::vector<GavelJob>& jobs,
                          const std::vector<int32_t>& gpus_of_type) {
  std::vector<double> norm;
  for (const GavelJob& j : jobs) {
    const double average = AverageThroughput(j, gpus_of_type, 1);
    norm.push_back(average > 0 ? average : 1);
  }
  return norm;
}

// Adds, for each job, the row sum_t T[j][t]/norm_j X[j][t] - z >= floor_j (no z: column -1).
void AddThroughputRows(Program& p, const std::vector<GavelJob>& jobs,
                       const std::vector<double>& norm, int z_column,
                       const std::vector<double>& floor) {
  for (size_t j = 0; j < jobs.size(); ++j) {
    const int row = p.lp.AddRow(floor[j], kLpInfinity);
    for (size_t t = 0; t < p.column[j].size(); ++t) {
      p.lp.Set(row, p.column[j][t], Throughput(jobs[j], t) / norm[j]);
    }
    if (z_column >= 0) p.lp.Set(row, z_column, -1);
  }
}

// Maximises the sum of normalised throughputs subject to the per-job floors.
GavelAllocation MaxSumWithFloors(const std::vector<GavelJob>& jobs,
                                 const std::vector<int32_t>& gpus_of_type,
                                 const std::vector<double>& norm,
                                 const std::vector<double>& floor) {
  Program p = BaseProgram(jobs, gpus_of_type, &norm);
  AddThroughputRows(p, jobs, norm, -1, floor);
  const LpSolution s = p.lp.Maximize(0);
  GavelAllocation out;
  if (s.status != LpStatus::kOptimal) return out;
  out.solved = true;
  out.x.assign(jobs.size(), std::vector<double>(gpus_of_type.size(), 0));
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (size_t t = 0; t < gpus_of_type.size(); ++t) {
      out.x[j][t] = std::clamp(s.values[p.column[j][t]], 0.0, 1.0);
    }
  }
  return out;
}

GavelAllocation MaxMin(const std::vector<GavelJob>& jobs,
                       const std::vector<int32_t>& gpus_of_type) {
  const std::vector<double> norm = Norms(jobs, gpus_of_type);
  Program p = BaseProgram(jobs, gpus_of_type, nullptr);
  const int z = p.lp.AddColumn(1, 0, kLpInfinity);
  AddThroughputRows(p, jobs, norm, z, std::vector<double>(jobs.size(), 0));
  const LpSolution first = p.lp.Maximize(0);
  if (first.status != LpStatus::kOptimal) return {};
  // Hold the minimum (less a hair for the simplex's tolerances) and use what is left over.
  const double floor = first.objective * (1 - 1e-7);
  GavelAllocation out =
      MaxSumWithFloors(jobs, gpus_of_type, norm, std::vector<double>(jobs.size(), floor));
  out.objective = first.objective;
  return out;
}

// FTF's per-job parts: rho_j(X) = (elapsed + remaining / throughput) / denominator.
struct FtfTerms {
  double elapsed = 0, remaining = 0, denominator = 1;
};

std::vector<FtfTerms> FtfTermsOf(const std::vector<GavelJob>& jobs,
                                 const std::vector<int32_t>& gpus_of_type) {
  const double share = EqualShareFraction(jobs, gpus_of_type);
  std::vector<FtfTerms> terms;
  for (const GavelJob& j : jobs) {
    const double isolated = AverageThroughput(j, gpus_of_type, share);
    FtfTerms f{j.elapsed_s, std::max(0.0, j.remaining_iterations), 1};
    f.denominator = isolated > 0 ? f.elapsed + f.remaining / isolated : std::max(f.elapsed, 1.0);
    if (f.denominator <= 0) f.denominator = 1;
    terms.push_back(f);
  }
  return terms;
}

// The floors on normalised throughput that rho_j <= r asks; false where r is below what elapsed
// time alone already gives a job with work left.
bool FloorsFor(double r, const std::vector<FtfTerms>& terms, const std::vector<double>& norm,
               std::vector<double>* floor) {
  floor->assign(terms.size(), 0);
  for (size_t j = 0; j < terms.size(); ++j) {
    if (terms[j].remaining <= 0) continue;
    const double slack = r * terms[j].denominator - terms[j].elapsed;
    if (slack <= 0) return false;
    (*floor)[j] = terms[j].remaining / slack / norm[j];
  }
  return true;
}

GavelAllocation FinishTimeFair(const std::vector<GavelJob>& jobs,
                               const std::vector<int32_t>& gpus_of_type) {
  const std::vector<double> norm = Norms(jobs, gpus_of_type);
  const std::vector<FtfTerms> terms = FtfTermsOf(jobs, gpus_of_type);
  std::vector<double> floor;
  const auto feasible = [&](double r, GavelAllocation* out) {
    if (!FloorsFor(r, terms, norm, &floor)) return false;
    *out = MaxSumWithFloors(jobs, gpus_of_type, norm, floor);
    return out->solved;
  };
  GavelAllocation best;
  double high = 1;
  for (int i = 0; i < 60 && !feasible(high, &best); ++i) high *= 2;
  if (!best.solved) return {};
  double low = 0;
  for (int i = 0; i < 30 && high - low > 1e-4 * high; ++i) {
    const double mid = (low + high) / 2;
    GavelAllocation at_mid;
    if (feasible(mid, &at_mid)) {
      high = mid;
      best = std::move(at_mid);
    } else {
      low = mid;
    }
  }
  best.objective = high;
  return best;
}

}  // namespace

GavelAllocation EqualShare(const std::vector<GavelJob>& jobs,
                           const std::vector<int32_t>& gpus_of_type) {
  const double share = EqualShareFraction(jobs, gpus_of_type);
  const double total = TotalGpus(gpus_of_type);
  GavelAllocation out;
  out.x.assign(jobs.size(), std::vector<double>(gpus_of_type.size(), 0));
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (size_t t = 0; t < gpus_of_type.size(); ++t) {
      out.x[j][t] = total > 0 ? share * gpus_of_type[t] / total : 0;
    }
  }
  return out;
}

GavelAllocation GavelAllocate(GavelObjective objective, const std::vector<GavelJob>& jobs,
                              const std::vector<int32_t>& gpus_of_type) {
  if (jobs.empty() || TotalGpus(gpus_of_type) <= 0) return GavelAllocation{true, {}, 0};
  GavelAllocation out = objective == GavelObjective::kMaxMinFairness
                            ? MaxMin(jobs, gpus_of_type)
                            : FinishTimeFair(jobs, gpus_of_type);
  return out.solved ? out : EqualShare(jobs, gpus_of_type);
}

}  // namespace troupe::scheduling
