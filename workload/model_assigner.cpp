#include "workload/model_assigner.hpp"

#include <cmath>
#include <string>

#include "workload/csv_input.hpp"

namespace troupe {
namespace {

constexpr const char* kClassNames[] = {"image", "language", "speech"};

}  // namespace

Status ModelAssigner::ValidateMix(const ModelCatalog& catalog, double image_pct,
                                  double language_pct, double speech_pct, std::string_view what) {
  const double percents[] = {image_pct, language_pct, speech_pct};
  double sum = 0;
  for (int c = 0; c < kClasses; ++c) {
    std::string name = std::string(what) + ": " + kClassNames[c] + "_percent";
    if (!std::isfinite(percents[c]) || percents[c] < 0) {
      return Status::InvalidInput(name + " must be a non-negative number, got " +
                                  FormatNumber(percents[c]));
    }
    if (percents[c] > 0 && catalog.ModelsOfClass(kClassNames[c]).empty()) {
      return Status::InvalidInput(name + " is positive but the model catalogue has no " +
                                  kClassNames[c] + " model");
    }
    sum += percents[c];
  }
  if (!(sum > 0)) {
    return Status::InvalidInput(std::string(what) + ": the class percentages sum to 0");
  }
  return Status::Ok();
}

ModelAssigner::ModelAssigner(const ModelCatalog& catalog, double image_pct, double language_pct,
                             double speech_pct)
    : catalog_(catalog), percent_{image_pct, language_pct, speech_pct} {
  valid_ = ValidateMix(catalog, image_pct, language_pct, speech_pct, "").ok();
  for (int c = 0; c < kClasses; ++c) models_[c] = catalog.ModelsOfClass(kClassNames[c]);
}

// Compares lags scaled by (sum of percentages × jobs so far), which keeps the arithmetic in
// whole numbers for whole percentages, so ties are exact and break in class order as specified.
int ModelAssigner::PickClass() const {
  double sum = percent_[0] + percent_[1] + percent_[2];
  int best = -1;
  double best_score = 0;
  for (int c = 0; c < kClasses; ++c) {
    if (!(percent_[c] > 0)) continue;
    double score = total_ == 0 ? percent_[c]
                               : percent_[c] * static_cast<double>(total_) -
                                     sum * static_cast<double>(count_[c]);
    if (best < 0 || score > best_score) {
      best = c;
      best_score = score;
    }
  }
  return best;
}

const ModelProfile& ModelAssigner::Next() {
  if (!valid_) {
    // Precondition violated: stay deterministic and in bounds rather than misbehave.
    const auto& all = catalog_.models();
    return all[static_cast<size_t>(total_++) % all.size()];
  }
  int c = PickClass();
  const ModelProfile* model = models_[c][next_model_[c]];
  next_model_[c] = (next_model_[c] + 1) % models_[c].size();
  ++count_[c];
  ++total_;
  return *model;
}

}  // namespace troupe
