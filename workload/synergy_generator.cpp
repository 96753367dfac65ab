#include "workload/synergy_generator.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "workload/csv_input.hpp"

namespace troupe {
namespace {

// Synergy's duration mixture: mostly jobs of 30 min to 16.7 h, a fifth of 16.7 h to 6.9 days.
constexpr double kShortProbability = 0.8;
constexpr double kShortExponent[] = {1.5, 3};
constexpr double kLongExponent[] = {3, 4};

}  // namespace

Status ValidateGeneratorOptions(const GeneratorOptions& options, const ModelCatalog& catalog) {
  if (!std::isfinite(options.jobs_per_hour) || !(options.jobs_per_hour > 0)) {
    return Status::InvalidInput("generator options: jobs_per_hour must be positive, got " +
                                FormatNumber(options.jobs_per_hour));
  }
  if (options.num_jobs < 0) {
    return Status::InvalidInput("generator options: num_jobs must not be negative, got " +
                                std::to_string(options.num_jobs));
  }
  return ModelAssigner::ValidateMix(catalog, options.image_percent, options.language_percent,
                                    options.speech_percent, "generator options");
}

SynergyGenerator::SynergyGenerator(const GeneratorOptions& options, const ModelCatalog& catalog)
    : options_(options),
      rng_(options.seed),
      assigner_(catalog, options.image_percent, options.language_percent, options.speech_percent) {
  Generate();
}

std::optional<double> SynergyGenerator::NextArrival() const {
  if (!next_) return std::nullopt;
  return next_->arrival_s;
}

JobSpec SynergyGenerator::Pop() {
  JobSpec job = std::move(*next_);
  Generate();
  return job;
}

void SynergyGenerator::Generate() {
  if (options_.num_jobs > 0 && generated_ >= options_.num_jobs) {
    next_.reset();
    return;
  }
  if (generated_ > 0) {
    last_arrival_s_ += std::ceil(rng_.Exponential(options_.jobs_per_hour / 3600));
  }
  bool is_short = rng_.Uniform01() < kShortProbability;
  const double* range = is_short ? kShortExponent : kLongExponent;
  double duration = 60 * std::pow(10.0, rng_.Uniform(range[0], range[1]));
  const ModelProfile& model = assigner_.Next();
  JobSpec job;
  job.job_id = generated_;
  job.model = model.name;
  job.gpus = options_.multi_gpu ? DrawGpus() : 1;
  job.iterations = std::max<int64_t>(1, static_cast<int64_t>(duration / model.iter_time_s));
  job.arrival_s = last_arrival_s_;
  next_ = std::move(job);
  next_duration_s_ = duration;
  ++generated_;
}

int32_t SynergyGenerator::DrawGpus() {
  double u = rng_.Uniform01();
  if (u < 0.70) return 1;
  if (u < 0.80) return 2;
  if (u < 0.95) return 4;
  return 8;
}

std::string SynergyGenerator::Describe() const {
  std::string out = "synergy generator (" + FormatNumber(options_.jobs_per_hour) + " jobs/h, " +
                    FormatNumber(options_.image_percent) + "/" +
                    FormatNumber(options_.language_percent) + "/" +
                    FormatNumber(options_.speech_percent) + " image/language/speech, " +
                    (options_.multi_gpu ? "multi-GPU" : "single-GPU") + ", seed " +
                    std::to_string(options_.seed) + ", ";
  if (options_.num_jobs > 0) return out + std::to_string(options_.num_jobs) + " jobs)";
  return out + "unbounded)";
}

}  // namespace troupe
