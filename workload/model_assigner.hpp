// ModelAssigner: Synergy's model mix for workloads that do not name their models.
//
// Contract: each call to Next() picks the model of the next job. The job goes to the class whose
// share so far lags its target the most (lag = target fraction − jobs of the class / jobs so far;
// before the first job every lag is its target fraction); ties go in the order image, language,
// speech; a class with a 0% target never gets a job. Within a class, models are taken
// round-robin in catalogue order. Deterministic, no randomness, so a trace replays identically.
// Percentages are normalised by their sum. ValidateMix says whether a mix can be honoured;
// constructing an assigner from a mix it rejects is a precondition violation (the assigner then
// falls back to round-robin over the whole catalogue rather than misbehave; an empty catalogue has
// nothing to return and is never valid).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/status.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {

class ModelAssigner {
 public:
  // Percentages must be finite and non-negative, sum to more than 0, and every class with a
  // positive share must have a model in the catalogue. `what` starts the error message, e.g.
  // "trace options" or "generator options".
  static Status ValidateMix(const ModelCatalog& catalog, double image_pct, double language_pct,
                            double speech_pct, std::string_view what);

  // Keeps a reference to `catalog`, which must outlive the assigner.
  ModelAssigner(const ModelCatalog& catalog, double image_pct, double language_pct,
                double speech_pct);

  const ModelProfile& Next();

 private:
  static constexpr int kClasses = 3;  // image, language, speech: the tie-break order

  int PickClass() const;

  const ModelCatalog& catalog_;
  std::array<double, kClasses> percent_{};
  std::array<std::vector<const ModelProfile*>, kClasses> models_;
  std::array<int64_t, kClasses> count_{};
  std::array<size_t, kClasses> next_model_{};
  int64_t total_ = 0;
  bool valid_ = false;
};

}  // namespace troupe
