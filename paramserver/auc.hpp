// Exact ROC AUC: the probability that a random positive scores above a random negative, ties
// counting one half (Mann-Whitney U over the ranks, tied scores sharing their average rank).
#pragma once

#include <span>

namespace troupe::paramserver {

// labels[i] > 0.5 is a positive. O(n log n). Returns NaN when either class is absent (AUC is
// undefined there). scores and labels have the same length.
double Auc(std::span<const float> scores, std::span<const float> labels);

// Mean logistic loss of probabilities against 0/1 labels (probabilities clamped to [1e-7, 1-1e-7]).
double LogLoss(std::span<const float> probabilities, std::span<const float> labels);

}  // namespace troupe::paramserver
