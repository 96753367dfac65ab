#include "paramserver/auc.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace troupe::paramserver {

double Auc(std::span<const float> scores, std::span<const float> labels) {
  assert(scores.size() == labels.size());
  const size_t n = scores.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // Sum of the positives' ranks (1-based), each tie group taking its average rank.
  double positive_rank_sum = 0;
  double positives = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    double group_positives = 0;
    for (; j < n && scores[order[j]] == scores[order[i]]; ++j) {
      if (labels[order[j]] > 0.5f) ++group_positives;
    }
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    positive_rank_sum += group_positives * average_rank;
    positives += group_positives;
    i = j;
  }
  const double negatives = static_cast<double>(n) - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  return (positive_rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

double LogLoss(std::span<const float> probabilities, std::span<const float> labels) {
  assert(probabilities.size() == labels.size());
  if (probabilities.empty()) return 0;
  double sum = 0;
  for (size_t i = 0; i < probabilities.size(); ++i) {
    const double p = std::clamp(static_cast<double>(probabilities[i]), 1e-7, 1 - 1e-7);
    sum -= labels[i] > 0.5f ? std::log(p) : std::log(1 - p);
  }
  return sum / static_cast<double>(probabilities.size());
}

}  // namespace troupe::paramserver
