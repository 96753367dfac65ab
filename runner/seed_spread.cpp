#include "runner/seed_spread.hpp"

#include <cmath>

namespace troupe {

SeedSpread SpreadOf(const std::vector<double>& values) {
  SeedSpread spread;
  spread.n = static_cast<int>(values.size());
  if (values.empty()) return spread;
  double sum = 0;
  for (double v : values) sum += v;
  spread.mean = sum / spread.n;
  if (spread.n < 2) return spread;
  // Two passes: deviations from the mean, so that large means do not swallow small spreads.
  double squares = 0;
  for (double v : values) squares += (v - spread.mean) * (v - spread.mean);
  spread.sd = std::sqrt(squares / (spread.n - 1));
  return spread;
}

}  // namespace troupe
