// The Synergy workload generator: a seed names one workload, and its statistics are the ones
// Synergy's simulator draws (Poisson arrivals, the two-range duration mixture, the class mix and
// the multi-GPU mix).
#include "workload/synergy_generator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "workload/model_catalog.hpp"
#include "base/rng.hpp"

namespace troupe {
namespace {

struct Drawn {
  JobSpec job;
  double duration_s;
};

std::vector<Drawn> Draw(const GeneratorOptions& options, int64_t count) {
  SynergyGenerator generator(options, ModelCatalog::BuiltIn());
  std::vector<Drawn> out;
  while (static_cast<int64_t>(out.size()) < count && generator.NextArrival()) {
    double duration = generator.next_duration_s();
    out.push_back({generator.Pop(), duration});
  }
  return out;
}

bool Same(const JobSpec& a, const JobSpec& b) {
  return a.job_id == b.job_id && a.model == b.model && a.gpus == b.gpus &&
         a.iterations == b.iterations && a.arrival_s == b.arrival_s;
}

// Mean of 60 * 10^U(lo, hi): 60 * (10^hi - 10^lo) / ((hi - lo) ln 10).
double MeanOfRange(double lo, double hi) {
  return 60 * (std::pow(10.0, hi) - std::pow(10.0, lo)) / ((hi - lo) * std::log(10.0));
}

constexpr int64_t kMany = 100000;

TEST(SynergyGeneratorTest, ASeedNamesOneWorkload) {
  GeneratorOptions options;
  options.seed = 7;
  options.multi_gpu = true;
  auto a = Draw(options, 2000), b = Draw(options, 2000);
  ASSERT_EQ(a.size(), 2000u);
  for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(Same(a[i].job, b[i].job)) << "job " << i;
  options.seed = 8;
  auto c = Draw(options, 2000);
  int differing = 0;
  for (size_t i = 0; i < a.size(); ++i) differing += Same(a[i].job, c[i].job) ? 0 : 1;
  EXPECT_GT(differing, 1900);
}

TEST(SynergyGeneratorTest, DrawsFollowTheDocumentedOrder) {
  GeneratorOptions options;
  options.seed = 42;
  options.multi_gpu = true;
  auto jobs = Draw(options, 3);
  Rng rng(42);
  double arrival = 0;
  const int kGpus[] = {1, 2, 4, 8};
  const double kCumulative[] = {0.70, 0.80, 0.95, 1.0};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) arrival += std::ceil(rng.Exponential(9.0 / 3600));
    bool is_short = rng.Uniform01() < 0.8;
    double duration = 60 * std::pow(10.0, is_short ? rng.Uniform(1.5, 3) : rng.Uniform(3, 4));
    double u = rng.Uniform01();
    int gpus = 0;
    for (int k = 0; k < 4 && gpus == 0; ++k) gpus = u < kCumulative[k] ? kGpus[k] : 0;
    EXPECT_EQ(jobs[i].job.arrival_s, arrival) << "job " << i;
    EXPECT_EQ(jobs[i].duration_s, duration) << "job " << i;
    EXPECT_EQ(jobs[i].job.gpus, gpus) << "job " << i;
  }
  EXPECT_EQ(jobs[0].job.arrival_s, 0);
}

TEST(SynergyGeneratorTest, ClassSharesStayWithinOneJobOfTheTargetAtEveryPrefix) {
  auto jobs = Draw(GeneratorOptions{}, kMany);
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  std::map<std::string, double> target = {{"image", 0.2}, {"language", 0.7}, {"speech", 0.1}};
  std::map<std::string, int64_t> count;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const ModelProfile* model = catalog.Find(jobs[i].job.model);
    ASSERT_NE(model, nullptr);
    ++count[model->model_class];
    double total = static_cast<double>(i + 1);
    for (const auto& [name, fraction] : target) {
      ASSERT_LE(std::abs(static_cast<double>(count[name]) - fraction * total), 1.0)
          << name << " after " << i + 1 << " jobs";
    }
  }
}

TEST(SynergyGeneratorTest, ModelsWithinAClassAreTakenRoundRobin) {
  auto jobs = Draw(GeneratorOptions{}, 200);
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  std::vector<std::string> image;
  for (const Drawn& d : jobs) {
    if (catalog.Find(d.job.model)->model_class == "image") image.push_back(d.job.model);
  }
  ASSERT_GE(image.size(), 10u);
  const char* kOrder[] = {"alexnet", "res18", "res50", "mobilenet", "shufflenet"};
  for (size_t i = 0; i < image.size(); ++i) EXPECT_EQ(image[i], kOrder[i % 5]);
}

TEST(SynergyGeneratorTest, ArrivalsArePoissonInWholeSeconds) {
  auto jobs = Draw(GeneratorOptions{}, kMany);
  for (size_t i = 0; i < jobs.size(); ++i) {
    ASSERT_EQ(jobs[i].job.job_id, static_cast<int64_t>(i));
    ASSERT_EQ(jobs[i].job.arrival_s, std::floor(jobs[i].job.arrival_s));
    if (i > 0) {
      ASSERT_GE(jobs[i].job.arrival_s, jobs[i - 1].job.arrival_s);
    }
  }
  double mean_gap = jobs.back().job.arrival_s / static_cast<double>(jobs.size() - 1);
  EXPECT_NEAR(mean_gap, 3600.0 / 9, 0.03 * 400);
}

TEST(SynergyGeneratorTest, DurationsFollowSynergysMixture) {
  auto jobs = Draw(GeneratorOptions{}, kMany);
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  double long_jobs = 0, sum = 0;
  for (const Drawn& d : jobs) {
    ASSERT_GE(d.duration_s, 60 * std::pow(10.0, 1.5));
    ASSERT_LT(d.duration_s, 60 * 1e4);
    if (d.duration_s >= 60 * 1e3) ++long_jobs;
    sum += d.duration_s;
    double iter_time = catalog.Find(d.job.model)->iter_time_s;
    ASSERT_EQ(d.job.iterations, std::max<int64_t>(1, std::floor(d.duration_s / iter_time)));
  }
  double n = static_cast<double>(jobs.size());
  EXPECT_NEAR(long_jobs / n, 0.2, 0.01);
  double analytic = 0.8 * MeanOfRange(1.5, 3) + 0.2 * MeanOfRange(3, 4);  // ≈ 16.7 h
  EXPECT_NEAR(sum / n, analytic, 0.03 * analytic);
}

TEST(SynergyGeneratorTest, SingleGpuByDefaultAndSynergysMixWithMultiGpu) {
  for (const Drawn& d : Draw(GeneratorOptions{}, 1000)) ASSERT_EQ(d.job.gpus, 1);
  GeneratorOptions options;
  options.multi_gpu = true;
  auto jobs = Draw(options, kMany);
  std::map<int, double> count;
  for (const Drawn& d : jobs) ++count[d.job.gpus];
  ASSERT_EQ(count.size(), 4u);
  double n = static_cast<double>(jobs.size());
  EXPECT_NEAR(count[1] / n, 0.70, 0.015);
  EXPECT_NEAR(count[2] / n, 0.10, 0.015);
  EXPECT_NEAR(count[4] / n, 0.15, 0.015);
  EXPECT_NEAR(count[8] / n, 0.05, 0.015);
}

TEST(SynergyGeneratorTest, NumJobsBoundsTheStreamAndZeroIsUnbounded) {
  GeneratorOptions options;
  options.num_jobs = 5;
  SynergyGenerator bounded(options, ModelCatalog::BuiltIn());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(bounded.NextArrival().has_value());
    EXPECT_EQ(bounded.Pop().job_id, i);
  }
  EXPECT_FALSE(bounded.NextArrival().has_value());
  EXPECT_NE(bounded.Describe().find("5 jobs"), std::string::npos) << bounded.Describe();

  options.num_jobs = 0;
  EXPECT_EQ(Draw(options, 30000).size(), 30000u);
  EXPECT_NE(SynergyGenerator(options, ModelCatalog::BuiltIn()).Describe().find("unbounded"),
            std::string::npos);
}

TEST(SynergyGeneratorTest, InvalidOptionsAreRefused) {
  const ModelCatalog& catalog = ModelCatalog::BuiltIn();
  EXPECT_TRUE(ValidateGeneratorOptions(GeneratorOptions{}, catalog).ok());
  GeneratorOptions options;
  options.jobs_per_hour = 0;
  Status status = ValidateGeneratorOptions(options, catalog);
  EXPECT_EQ(status.code(), Status::Code::kInvalidInput);
  EXPECT_NE(status.message().find("jobs_per_hour"), std::string::npos);
  options = {};
  options.num_jobs = -1;
  EXPECT_NE(ValidateGeneratorOptions(options, catalog).message().find("num_jobs"),
            std::string::npos);
  options = {};
  options.speech_percent = -10;
  EXPECT_NE(ValidateGeneratorOptions(options, catalog).message().find("speech_percent"),
            std::string::npos);
}

TEST(SynergyGeneratorTest, AZeroPercentClassNeverGetsAJob) {
  GeneratorOptions options;
  options.image_percent = 0;
  options.language_percent = 100;
  options.speech_percent = 0;
  for (const Drawn& d : Draw(options, 500)) {
    EXPECT_EQ(ModelCatalog::BuiltIn().Find(d.job.model)->model_class, "language");
  }
}

}  // namespace
}  // namespace troupe
