// A random sensitivity matrix on the catalogue's grid (CPUs 1-24 per GPU, memory 20-250 GB per
// GPU), monotone in both dimensions as the mechanisms take matrices to be, for tests that need
// jobs of many shapes of sensitivity.
#pragma once

#include <random>

#include "messages/sensitivity.hpp"

namespace troupe::testing {

inline SensitivityMatrix RandomMonotoneMatrix(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> step(0, 0.5);
  SensitivityMatrix w{{1, 3, 6, 12, 24}, {20, 62.5, 125, 250}, {}};
  double a = 0;
  for (size_t c = 0; c < w.cpu_grid.size(); ++c, a += step(rng)) {
    double b = 0.2;
    for (size_t m = 0; m < w.memory_grid.size(); ++m, b += step(rng)) w.values.push_back(a + b);
  }
  return w;
}

}  // namespace troupe::testing
