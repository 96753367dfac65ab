// SynergyGenerator: the synthetic workload of Synergy's simulator, as a lazy JobSource.
//
// Contract: job ids are 0, 1, 2, ...; job 0 arrives at 0 and each later job at the previous
// arrival plus ceil(Exponential(jobs_per_hour / 3600)) seconds (Synergy rounds inter-arrival
// times up to whole seconds). A job's duration D at the GPU-proportional share is, with
// probability 0.8, 60 * 10^U(1.5, 3) seconds and otherwise 60 * 10^U(3, 4) seconds; its model
// comes from ModelAssigner (class mix, lag-first, round-robin); iterations = floor(D / iter_time),
// at least 1; gpus is 1, or with multi_gpu 1, 2, 4 or 8 with probabilities 70/10/15/5 %.
// The draws for one job are made in a fixed order (inter-arrival, except for job 0; range coin;
// duration exponent; GPU count, only with multi_gpu), all from one Rng seeded with `seed`, so a
// seed names a workload on every platform. Jobs are made one at a time as they are pulled, so
// num_jobs = 0 (unbounded) costs nothing until a run consumes them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.hpp"
#include "workload/job_source.hpp"
#include "workload/model_assigner.hpp"
#include "workload/model_catalog.hpp"
#include "base/rng.hpp"

namespace troupe {

struct GeneratorOptions {
  double jobs_per_hour = 9;
  int64_t num_jobs = 0;  // 0 = unbounded
  double image_percent = 20, language_percent = 70, speech_percent = 10;
  bool multi_gpu = false;
  uint64_t seed = 1;
};

// Whether a generator can honour `options`: a positive, finite rate, num_jobs >= 0 and a class
// mix the catalogue can serve. InvalidInput otherwise, one line naming the option.
Status ValidateGeneratorOptions(const GeneratorOptions& options, const ModelCatalog& catalog);

class SynergyGenerator : public JobSource {
 public:
  // Precondition: ValidateGeneratorOptions(options, catalog) is OK. `catalog` must outlive the
  // generator.
  SynergyGenerator(const GeneratorOptions& options, const ModelCatalog& catalog);

  std::optional<double> NextArrival() const override;
  JobSpec Pop() override;
  // e.g. "synergy generator (9 jobs/h, 20/70/10 image/language/speech, single-GPU, seed 1,
  // unbounded)".
  std::string Describe() const override;

  // The duration at the proportional share drawn for the job Pop() will return next; exposed so
  // tests can check the distribution without the rounding of iterations.
  double next_duration_s() const { return next_duration_s_; }

 private:
  void Generate();  // draws the job after the last one into next_
  int32_t DrawGpus();

  GeneratorOptions options_;
  Rng rng_;
  ModelAssigner assigner_;
  std::optional<JobSpec> next_;
  double next_duration_s_ = 0;
  double last_arrival_s_ = 0;
  int64_t generated_ = 0;
};

}  // namespace troupe
