// SensitivityMatrix: a job's throughput as a function of the CPUs and memory it gets per GPU,
// relative to its throughput at the GPU-proportional share (1.0 there). Synergy's W_j.
//
// The grid is ascending on both axes; values are row-major [cpu][memory]. At() interpolates
// bilinearly inside the grid and clamps to its edges outside it, and reproduces a grid value
// exactly at a grid point. Plain data: the model catalogue holds the true matrices, profiling
// produces estimated ones, and schedulers read them; `inspect` lets it cross processes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace troupe {

struct SensitivityMatrix {
  std::vector<double> cpu_grid;     // CPUs per GPU
  std::vector<double> memory_grid;  // GB per GPU
  std::vector<double> values;       // row-major [cpu][memory]

  bool empty() const { return values.empty(); }
  double at_index(size_t cpu, size_t memory) const {
    return values[cpu * memory_grid.size() + memory];
  }
  double& at_index(size_t cpu, size_t memory) { return values[cpu * memory_grid.size() + memory]; }

  // Throughput at this allocation per GPU; 1 for an empty matrix (an insensitive job).
  double At(double cpus_per_gpu, double memory_gb_per_gpu) const {
    if (values.empty()) return 1;
    size_t c, m;
    double tc, tm;
    Locate(cpu_grid, cpus_per_gpu, &c, &tc);
    Locate(memory_grid, memory_gb_per_gpu, &m, &tm);
    const size_t c1 = std::min(c + 1, cpu_grid.size() - 1);
    const size_t m1 = std::min(m + 1, memory_grid.size() - 1);
    // Written so that a zero fraction reproduces the grid value exactly.
    const double low = at_index(c, m) * (1 - tm) + at_index(c, m1) * tm;
    const double high = at_index(c1, m) * (1 - tm) + at_index(c1, m1) * tm;
    return low * (1 - tc) + high * tc;
  }

  // Where `x` falls on `grid`: the cell's lower index and the fraction of the way to the next
  // point, clamped to the edges (a NaN clamps to the lower edge rather than reading past the end).
  static void Locate(const std::vector<double>& grid, double x, size_t* index, double* fraction) {
    *index = 0;
    *fraction = 0;
    if (grid.size() < 2 || !(x > grid.front())) return;
    if (x >= grid.back()) {
      *index = grid.size() - 2;
      *fraction = 1;
      return;
    }
    const size_t upper = std::upper_bound(grid.begin(), grid.end(), x) - grid.begin();
    *index = upper - 1;
    *fraction = (x - grid[*index]) / (grid[upper] - grid[*index]);
  }
};
template <class Inspector>
auto inspect(Inspector& f, SensitivityMatrix& x) {
  return f(x.cpu_grid, x.memory_grid, x.values);
}

}  // namespace troupe
