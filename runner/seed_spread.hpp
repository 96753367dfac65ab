// The spread of one figure over a sweep's seeds: how far a comparison between two points of a
// sweep can be trusted. `troupe sweep` prints it beside each mean (apps/sweep_table.cpp);
// `troupe report` draws it, with a confidence interval, from sweep.csv (scripts/troupe_plots).
#pragma once

#include <vector>

namespace troupe {

struct SeedSpread {
  int n = 0;
  double mean = 0;
  double sd = 0;  // sample standard deviation (n - 1 in the denominator); 0 when n < 2
};

SeedSpread SpreadOf(const std::vector<double>& values);

}  // namespace troupe
