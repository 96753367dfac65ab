#include "scheduling/profiling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <utility>

namespace troupe::scheduling {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The integer CPU counts the server offers one GPU: 1..floor(server_cpus), at least 1.
int32_t CpuCount(const ProfilingOptions& options) {
  return std::max<int32_t>(1, static_cast<int32_t>(std::floor(options.server_cpus)));
}

// The tolerance the ideal-demand rule uses: the configured one, or wider under noise.
double IdealTolerance(const ProfilingOptions& options) {
  return std::max(options.ideal_tolerance, 3 * options.noise_stddev);
}

// Piecewise-linear through the points (sorted by CPUs), flat beyond the first and last.
double InterpolateCurve(const std::vector<ProfilePoint>& sorted, double cpus) {
  if (sorted.empty()) return 1;
  if (cpus <= sorted.front().cpus_per_gpu) return sorted.front().throughput;
  if (cpus >= sorted.back().cpus_per_gpu) return sorted.back().throughput;
  auto upper =
      std::upper_bound(sorted.begin(), sorted.end(), cpus,
                       [](double c, const ProfilePoint& point) { return c < point.cpus_per_gpu; });
  const ProfilePoint& hi = *upper;
  const ProfilePoint& lo = *(upper - 1);
  const double t = (cpus - lo.cpus_per_gpu) / (hi.cpus_per_gpu - lo.cpus_per_gpu);
  return lo.throughput * (1 - t) + hi.throughput * t;
}

void FinishResult(const ProfilingOptions& options, ProfileResult* result) {
  result->points_profiled = static_cast<int32_t>(result->points.size());
  result->profiling_s = result->points_profiled * options.seconds_per_point;
  const DemandVector ideal = IdealDemandOf(result->estimated, IdealTolerance(options));
  result->ideal_cpus_per_gpu = ideal.cpus_per_gpu;
  result->ideal_memory_gb_per_gpu = ideal.memory_gb_per_gpu;
  result->speedup_at_ideal = ideal.speedup;
}

ProfileResult ProfileOptimistic(const SensitivityMatrix& grid, const DatasetModel& dataset,
                                const ProfilingOptions& options, const MeasureFn& measure) {
  ProfileResult result;
  result.points = SearchCpuAxis(options, measure);
  std::vector<ProfilePoint> sorted = result.points;
  std::sort(sorted.begin(), sorted.end(), [](const ProfilePoint& a, const ProfilePoint& b) {
    return a.cpus_per_gpu < b.cpus_per_gpu;
  });
  result.estimated = CombineAxes(
      grid, [&](double cpus) { return InterpolateCurve(sorted, cpus); }, dataset);
  FinishResult(options, &result);
  return result;
}

ProfileResult ProfileNaive(const SensitivityMatrix& grid, const ProfilingOptions& options,
                           const MeasureFn& measure) {
  ProfileResult result;
  // The measured lattice, then read at the grid's points (exact where they coincide).
  SensitivityMatrix lattice;
  for (int32_t c = 1; c <= CpuCount(options); ++c) lattice.cpu_grid.push_back(c);
  lattice.memory_grid =
      NaiveMemoryLevels(grid.memory_grid, options.server_memory_gb, options.naive_memory_points);
  for (double cpus : lattice.cpu_grid) {
    for (double memory : lattice.memory_grid) {
      const double throughput = measure(cpus, memory);
      lattice.values.push_back(throughput);
      result.points.push_back({cpus, memory, throughput});
    }
  }
  result.estimated = grid;
  for (size_t c = 0; c < grid.cpu_grid.size(); ++c) {
    for (size_t m = 0; m < grid.memory_grid.size(); ++m) {
      result.estimated.at_index(c, m) = lattice.At(grid.cpu_grid[c], grid.memory_grid[m]);
    }
  }
  FinishResult(options, &result);
  return result;
}

}  // namespace

const char* ProfilingModeName(ProfilingMode mode) {
  switch (mode) {
    case ProfilingMode::kOracle:
      return "oracle";
    case ProfilingMode::kOptimistic:
      return "optimistic";
    case ProfilingMode::kNaive:
      return "naive";
  }
  return "unknown";
}

bool ParseProfilingMode(std::string_view text, ProfilingMode* out) {
  for (ProfilingMode mode :
       {ProfilingMode::kOracle, ProfilingMode::kOptimistic, ProfilingMode::kNaive}) {
    if (text == ProfilingModeName(mode)) {
      *out = mode;
      return true;
    }
  }
  return false;
}

double DatasetModel::MemoryBound(double memory_gb_per_gpu) const {
  if (memory_gb_per_gpu < min_memory_gb_per_gpu) return thrash_throughput;
  if (!(dataset_gb_per_gpu > 0)) return kInfinity;
  const double miss = 1 - std::min(1.0, memory_gb_per_gpu / dataset_gb_per_gpu);
  if (!(miss > 0)) return kInfinity;
  return storage_throughput / miss;
}

DemandVector IdealDemandOf(const SensitivityMatrix& matrix, double tolerance) {
  DemandVector ideal;
  if (matrix.empty()) return ideal;
  const double best = *std::max_element(matrix.values.begin(), matrix.values.end());
  const double enough = (1 - tolerance) * best;
  for (size_t c = 0; c < matrix.cpu_grid.size(); ++c) {
    for (size_t m = 0; m < matrix.memory_grid.size(); ++m) {
      if (matrix.at_index(c, m) >= enough) {
        ideal.cpus_per_gpu = matrix.cpu_grid[c];
        ideal.memory_gb_per_gpu = matrix.memory_grid[m];
        ideal.speedup = matrix.at_index(c, m);
        return ideal;
      }
    }
  }
  return ideal;  // unreachable: the best cell itself qualifies
}

std::vector<ProfilePoint> SearchCpuAxis(const ProfilingOptions& options, const MeasureFn& measure) {
  std::vector<ProfilePoint> points;
  const double full_memory = options.server_memory_gb;
  // Measures once per CPU count: the bisection may come back to a point already taken.
  auto take = [&](int32_t cpus) {
    for (const ProfilePoint& point : points) {
      if (point.cpus_per_gpu == cpus) return point.throughput;
    }
    const double throughput = measure(cpus, full_memory);
    points.push_back({static_cast<double>(cpus), full_memory, throughput});
    return throughput;
  };
  // All CPUs (the best the server can do), the GPU-proportional share (the reference every
  // throughput is relative to, and the scheduler's fallback) and one CPU, then bisect [1, all]
  // for the knee: when all CPUs beat `mid` by less than the threshold, the CPUs above `mid` are
  // not worth having and the knee is at or below it (descend into the lower half), otherwise it
  // lies above (ascend into the upper half).
  int32_t hi = CpuCount(options);
  const double best = take(hi);
  const auto enough = [&](double throughput) {
    return best < throughput * (1 + options.improvement_threshold);
  };
  const int32_t share = static_cast<int32_t>(
      std::floor(options.server_cpus / std::max<int32_t>(1, options.server_gpus)));
  if (share > 1 && share < hi) take(share);
  int32_t lo = 1;
  if (enough(take(lo))) return points;  // flat: one CPU is as good as all
  while (hi - lo > 1) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (enough(take(mid))) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return points;
}

SensitivityMatrix CombineAxes(const SensitivityMatrix& grid,
                              const std::function<double(double)>& cpu_curve,
                              const DatasetModel& dataset) {
  SensitivityMatrix estimate = grid;
  estimate.values.assign(grid.cpu_grid.size() * grid.memory_grid.size(), 0);
  for (size_t c = 0; c < grid.cpu_grid.size(); ++c) {
    const double cpu_bound = cpu_curve(grid.cpu_grid[c]);
    for (size_t m = 0; m < grid.memory_grid.size(); ++m) {
      estimate.at_index(c, m) = std::min(cpu_bound, dataset.MemoryBound(grid.memory_grid[m]));
    }
  }
  return estimate;
}

std::vector<double> NaiveMemoryLevels(const std::vector<double>& grid, double full_memory_gb,
                                      int32_t count) {
  std::vector<double> levels;
  for (double memory : grid) {
    if (memory < full_memory_gb) levels.push_back(memory);
  }
  levels.push_back(full_memory_gb);
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  // Refine inside the grid (everything above its top reads the same); if the grid offers no gap,
  // refine up to full memory.
  const double top = grid.empty() ? full_memory_gb : std::min(grid.back(), full_memory_gb);
  while (static_cast<int32_t>(levels.size()) < count) {
    size_t widest = levels.size();
    double widest_gap = 0;
    for (bool inside : {true, false}) {
      for (size_t i = 0; i + 1 < levels.size(); ++i) {
        if (inside && levels[i + 1] > top) break;
        const double gap = levels[i + 1] - levels[i];
        if (gap > widest_gap) {
          widest_gap = gap;
          widest = i;
        }
      }
      if (widest < levels.size()) break;
    }
    if (widest == levels.size()) break;  // a single level: nothing to split
    levels.insert(levels.begin() + widest + 1, (levels[widest] + levels[widest + 1]) / 2);
  }
  return levels;
}

ProfileResult ProfileJob(const SensitivityMatrix& truth, const DemandVector& catalogue_ideal,
                         const DatasetModel& dataset, const ProfilingOptions& options,
                         const MeasureFn& measure) {
  if (options.mode == ProfilingMode::kOracle) {
    ProfileResult result;
    result.estimated = truth;
    const DemandVector ideal = catalogue_ideal.cpus_per_gpu > 0
                                   ? catalogue_ideal
                                   : IdealDemandOf(truth, options.ideal_tolerance);
    result.ideal_cpus_per_gpu = ideal.cpus_per_gpu;
    result.ideal_memory_gb_per_gpu = ideal.memory_gb_per_gpu;
    result.speedup_at_ideal = ideal.speedup;
    return result;
  }
  MeasureFn exact = [&truth](double cpus, double memory) { return truth.At(cpus, memory); };
  const MeasureFn& run = measure ? measure : exact;
  if (options.mode == ProfilingMode::kNaive) return ProfileNaive(truth, options, run);
  return ProfileOptimistic(truth, dataset, options, run);
}

MeasureFn NoisyMeasure(const SensitivityMatrix& truth, double relative_stddev,
                       std::function<double()> uniform01) {
  return [truth, relative_stddev, uniform01 = std::move(uniform01)](double cpus, double memory) {
    const double u1 = uniform01(), u2 = uniform01();
    const double z =
        std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * std::numbers::pi * u2);  // 1 - u1 > 0
    return truth.At(cpus, memory) * std::max(0.0, 1 + relative_stddev * z);
  };
}

}  // namespace troupe::scheduling
