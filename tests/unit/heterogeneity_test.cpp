// Heterogeneous GPU types: the type speed table, type-aware placement, and Gavel's allocations.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/gavel.hpp"
#include "scheduling/gavel_lp.hpp"
#include "scheduling/gpu_placement.hpp"
#include "scheduling/mechanism_registry.hpp"
#include "workload/gpu_types.hpp"

namespace troupe::scheduling {
namespace {

// Every allocation is a fraction matrix: entries in [0,1], rows at most 1, and on each type the
// GPUs held on average within the type's GPUs.
void ExpectValid(const GavelAllocation& a, const std::vector<GavelJob>& jobs,
                 const std::vector<int32_t>& gpus_of_type) {
  ASSERT_EQ(a.x.size(), jobs.size());
  std::vector<double> used(gpus_of_type.size(), 0);
  for (size_t j = 0; j < jobs.size(); ++j) {
    ASSERT_EQ(a.x[j].size(), gpus_of_type.size());
    double row = 0;
    for (size_t t = 0; t < gpus_of_type.size(); ++t) {
      EXPECT_GE(a.x[j][t], 0);
      EXPECT_LE(a.x[j][t], 1);
      row += a.x[j][t];
      used[t] += jobs[j].gpus * a.x[j][t];
    }
    EXPECT_LE(row, 1 + 1e-6);
  }
  for (size_t t = 0; t < gpus_of_type.size(); ++t) EXPECT_LE(used[t], gpus_of_type[t] + 1e-6);
}

GavelJob Job(int32_t gpus, std::vector<double> throughput, double remaining = 0) {
  GavelJob j;
  j.gpus = gpus;
  j.throughput = std::move(throughput);
  j.remaining_iterations = remaining;
  return j;
}

TEST(GpuTypes, SpeedsAreGavelRatiosAgainstV100) {
  EXPECT_EQ(*GpuTypeSpeed("res50", "v100"), 1.0);
  EXPECT_NEAR(*GpuTypeSpeed("res50", "k80"), 0.347224 / 2.496766, 1e-12);
  EXPECT_NEAR(*GpuTypeSpeed("lstm", "p100"), 58.172672 / 64.742451, 1e-12);
  EXPECT_FALSE(GpuTypeSpeed("res50", "mi300").has_value());  // no other type is invented
  EXPECT_FALSE(GpuTypeSpeed("nosuchmodel", "k80").has_value());
  EXPECT_FALSE(GpuTypeSpeed("nosuchmodel", "a100").has_value());
  EXPECT_TRUE(IsKnownGpuType("p100"));
  EXPECT_TRUE(IsKnownGpuType("a100"));
  EXPECT_TRUE(IsKnownGpuType("h100"));
  EXPECT_FALSE(IsKnownGpuType("mi300"));
  EXPECT_EQ(KnownGpuTypesList(), "k80, p100, v100, a100, h100");
}

// A100 and H100 are derived from peak dense FP16 tensor throughput over V100's (125 TFLOPS):
// 312 and 989.4 TFLOPS, one ratio for every model, and faster than V100 for every model.
TEST(GpuTypes, A100AndH100AreDerivedFromPeakTensorThroughput) {
  for (const char* model : {"alexnet", "res18", "mobilenet", "shufflenet", "m5", "res50", "gnmt",
                            "transformer", "lstm", "deepspeech"}) {
    SCOPED_TRACE(model);
    const double v100 = *GpuTypeSpeed(model, "v100");
    const double a100 = *GpuTypeSpeed(model, "a100");
    const double h100 = *GpuTypeSpeed(model, "h100");
    EXPECT_NEAR(a100, 312.0 / 125.0, 1e-12);
    EXPECT_NEAR(h100, 989.4 / 125.0, 1e-12);
    EXPECT_LT(v100, a100);
    EXPECT_LT(a100, h100);
  }
}

// One 4-GPU server of each of three types.
ClusterLedger ThreeTypes() {
  return ClusterLedger({{4, 12, 250, 0}, {4, 12, 250, 1}, {4, 12, 250, 2}});
}

TEST(TypePlacement, JobGoesToTheTypeItRunsFastestOn) {
  ClusterLedger ledger = ThreeTypes();
  ASSERT_EQ(ledger.type_count(), 3);
  SchedJob job;
  job.gpus = 2;
  job.type_speed = std::make_shared<const std::vector<double>>(std::vector<double>{0.2, 1.5, 1});
  const AuxDemandFn none = [](int32_t, int32_t) { return AuxDemand{}; };
  PlacementParts parts = PlaceGpusByType(ledger, job, none);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].server, 1);  // p100 here
  // Its fastest type full: the next fastest, never a span of types while one type holds it.
  ledger.Take(1, 4, 0, 0);
  parts = PlaceGpusByType(ledger, job, none);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].server, 2);
}

TEST(TypePlacement, OneTypeIsPlainPlaceGpus) {
  ClusterLedger ledger({{4, 12, 250}, {8, 24, 500}, {2, 6, 125}});
  EXPECT_EQ(ledger.type_count(), 1);
  SchedJob job;
  job.gpus = 3;
  const AuxDemandFn none = [](int32_t, int32_t) { return AuxDemand{}; };
  const PlacementParts by_type = PlaceGpusByType(ledger, job, none);
  const PlacementParts plain = PlaceGpus(ledger, 3, none);
  ASSERT_EQ(by_type.size(), plain.size());
  EXPECT_EQ(by_type[0].server, plain[0].server);
}

// Every built-in mechanism puts a job on its fastest type while that type has room.
TEST(TypePlacement, EveryMechanismPrefersTheJobsFastestType) {
  SchedJob job;
  job.id = 7;
  job.gpus = 2;
  job.iter_time_s = 1;
  job.iterations_total = job.iterations_left = 100;
  job.type_speed = std::make_shared<const std::vector<double>>(std::vector<double>{0.2, 1.5, 1});
  for (const char* name : {"proportional", "greedy", "tune", "opt"}) {
    ClusterLedger ledger = ThreeTypes();
    const std::vector<JobPlacement> placed = MakeMechanism(name)->PlaceRound({&job}, ledger);
    ASSERT_EQ(placed.size(), 1u) << name;
    ASSERT_EQ(placed[0].parts.size(), 1u) << name;
    EXPECT_EQ(ledger.shape(placed[0].parts[0].server).gpu_type, 1) << name;
  }
}

// Three jobs on one GPU of each of two types: job 0 gains 10x on type 1, jobs 1 and 2 only 2x.
// The equal share (a third of each type each) gives every job 2/3 of its throughput on an average
// GPU; trading type 1 to job 0 for type 0 to the others lifts every job above that.
std::vector<GavelJob> ThreeJobsTwoTypes() {
  return {Job(1, {1, 10}, 1000), Job(1, {1, 2}, 1000), Job(1, {1, 2}, 1000)};
}

TEST(GavelAllocation, MaxMinGivesEachJobTheTypeItGainsMostOn) {
  const std::vector<int32_t> gpus = {1, 1};
  const std::vector<GavelJob> jobs = ThreeJobsTwoTypes();
  const GavelAllocation a = GavelAllocate(GavelObjective::kMaxMinFairness, jobs, gpus);
  ASSERT_TRUE(a.solved);
  ExpectValid(a, jobs, gpus);
  EXPECT_NEAR(a.x[0][0], 0, 1e-6);  // job 0 runs on type 1 only
  EXPECT_NEAR(a.x[0][1], 0.4025, 1e-3);
  EXPECT_GT(a.x[1][0] + a.x[2][0], 0.999);  // jobs 1 and 2 hold all of type 0
  EXPECT_GT(a.objective, 2.0 / 3 + 0.05);   // 0.732 by hand
}

TEST(GavelAllocation, AgnosticThroughputsGiveAnEvenShareOfTime) {
  const std::vector<int32_t> gpus = {2, 2};
  std::vector<GavelJob> jobs;
  for (int i = 0; i < 8; ++i) jobs.push_back(Job(1, {1, 1}));
  const GavelAllocation a = GavelAllocate(GavelObjective::kMaxMinFairness, jobs, gpus);
  ASSERT_TRUE(a.solved);
  ExpectValid(a, jobs, gpus);
  for (const std::vector<double>& row : a.x) {
    EXPECT_NEAR(std::accumulate(row.begin(), row.end(), 0.0), 0.5, 1e-6);
  }
}

TEST(GavelAllocation, WideJobsNeverGetATypeTooSmallForThem) {
  const std::vector<int32_t> gpus = {2, 8};
  const std::vector<GavelJob> jobs = {Job(4, {5, 1}), Job(1, {1, 1}), Job(2, {1, 3})};
  for (GavelObjective o : {GavelObjective::kMaxMinFairness, GavelObjective::kFinishTimeFairness}) {
    std::vector<GavelJob> with_work = jobs;
    for (GavelJob& j : with_work) j.remaining_iterations = 1000;
    const GavelAllocation a = GavelAllocate(o, with_work, gpus);
    ASSERT_TRUE(a.solved);
    ExpectValid(a, with_work, gpus);
    EXPECT_EQ(a.x[0][0], 0);  // 4 GPUs never fit on the 2 of type 0
  }
}

TEST(GavelAllocation, FinishTimeFairnessBeatsTheEqualShareForEveryJob) {
  // Under the equal share every job has rho = 1 (it runs at its isolated throughput); the
  // heterogeneity-aware allocation brings every rho below that (to 0.91 by hand).
  const std::vector<int32_t> gpus = {1, 1};
  const std::vector<GavelJob> jobs = ThreeJobsTwoTypes();
  const GavelAllocation a = GavelAllocate(GavelObjective::kFinishTimeFairness, jobs, gpus);
  ASSERT_TRUE(a.solved);
  ExpectValid(a, jobs, gpus);
  EXPECT_LT(a.objective, 0.95);
  for (size_t j = 0; j < jobs.size(); ++j) {
    const double isolated = 2.0 / 3 * (jobs[j].throughput[0] + jobs[j].throughput[1]) / 2;
    const double throughput = a.x[j][0] * jobs[j].throughput[0] + a.x[j][1] * jobs[j].throughput[1];
    EXPECT_LE(isolated / throughput, a.objective + 1e-3) << "job " << j;
  }
}

// Gavel's rounds: over many rounds each job runs on each type about the fraction of rounds its
// allocation gives it, one type per round, and never more GPUs of a type than there are.
TEST(GavelMechanism, RoundsFollowTheAllocation) {
  std::vector<SchedJob> jobs(3);
  const std::vector<std::vector<double>> speeds = {{1, 10}, {1, 2}, {1, 2}};
  for (size_t j = 0; j < jobs.size(); ++j) {
    jobs[j].id = static_cast<int64_t>(j);
    jobs[j].iter_time_s = 1;
    jobs[j].iterations_total = jobs[j].iterations_left = 1000000;
    jobs[j].type_speed = std::make_shared<const std::vector<double>>(speeds[j]);
  }
  const std::vector<const SchedJob*> ordered = {&jobs[0], &jobs[1], &jobs[2]};
  GavelMechanism gavel(GavelObjective::kMaxMinFairness, true, 360);
  ClusterLedger ledger({{1, 3, 62.5, 0}, {1, 3, 62.5, 1}});
  std::vector<std::vector<int>> rounds_on(3, std::vector<int>(2, 0));
  constexpr int kRounds = 200;
  for (int round = 0; round < kRounds; ++round) {
    ledger.Reset();
    const std::vector<JobPlacement> placed = gavel.PlaceRound(ordered, ledger);
    std::vector<int> held(2, 0);
    for (const JobPlacement& p : placed) {
      ASSERT_EQ(p.parts.size(), 1u);
      const int32_t type = ledger.shape(p.parts[0].server).gpu_type;
      held[type] += p.parts[0].gpus;
      ++rounds_on[p.job_id][type];
    }
    EXPECT_LE(held[0], 1);
    EXPECT_LE(held[1], 1);
  }
  const GavelAllocation& x = gavel.last_allocation();
  for (size_t j = 0; j < 3; ++j) {
    for (size_t t = 0; t < 2; ++t) {
      EXPECT_NEAR(rounds_on[j][t] / static_cast<double>(kRounds), x.x[j][t], 0.02)
          << "job " << j << " type " << t;
    }
  }
}

// Whether a mechanism can ever place a job: any mechanism while the GPUs that survive hold it in
// all; a Gavel mechanism only while one type's do (it never spans types).
TEST(GavelMechanism, NeverPlacesAJobWiderThanEveryType) {
  const SurvivingGpus cluster{{8, 8}, 16, 0, 4};
  const SurvivingGpus lost_k80s{{0, 8}, 8, 2, 4};
  for (const char* name : {"proportional", "greedy", "tune", "opt"}) {
    EXPECT_EQ(MakeMechanism(name)->WhyNeverPlaced(12, cluster), "") << name;
    EXPECT_EQ(MakeMechanism(name)->WhyNeverPlaced(9, lost_k80s),
              "8 survive (2 of 4 servers lost for good)")
        << name;
  }
  for (const std::string name :
       {"gavel_las", "gavel_ftf", "gavel_las_agnostic", "gavel_ftf_agnostic"}) {
    const std::unique_ptr<Mechanism> gavel = MakeMechanism(name);
    EXPECT_EQ(gavel->WhyNeverPlaced(8, cluster), "");
    EXPECT_EQ(gavel->WhyNeverPlaced(12, cluster),
              name + " places a job on one GPU type, and the most of one type is 8");
    EXPECT_EQ(gavel->WhyNeverPlaced(8, lost_k80s), "");
    EXPECT_EQ(gavel->WhyNeverPlaced(8, SurvivingGpus{{4, 4}, 8, 2, 6}),
              name +
                  " places a job on one GPU type, and the most of one type is 4 (2 of 6 "
                  "servers lost for good; 8 GPUs survive in all)");
    EXPECT_EQ(gavel->WhyNeverPlaced(9, lost_k80s), "8 survive (2 of 4 servers lost for good)");
  }
}

}  // namespace
}  // namespace troupe::scheduling
