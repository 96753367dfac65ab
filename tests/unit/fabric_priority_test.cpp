// Link priority (scheduling/fabric_round.hpp, docs/network.md "Link priority"): under
// gpu_intensity two jobs that meet on a link split it in the ratio of their GPU intensities, held
// within max_priority_ratio; under fair they split it evenly whatever their intensities; a job
// whose compute changes between rounds is re-weighed; the phased model weighs bursts the same way.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "config/config.pb.h"
#include "scheduling/fabric_round.hpp"
#include "tests/unit/tree_fabric.hpp"

namespace troupe::scheduling {
namespace {

constexpr double kGradientBytes = 1e10;      // 10 GB: about 0.8 s a flow at a NIC's full rate
constexpr double kNicBytesPerS = 100e9 / 8;  // 100 Gb/s
constexpr int32_t kGpus = 12;                // each job: 8 GPUs on one server, 4 on server 1

// Three servers in one rack; job 0 on servers 0 and 1, job 1 on servers 1 and 2: each direction
// of server 1's NIC carries one flow of each job, every other link one flow.
class FabricPriority : public ::testing::Test {
 protected:
  std::shared_ptr<FabricModel> Model(LinkPriority priority, double max_ratio = 16,
                                     TrafficModel traffic = TrafficModel::kFluid) {
    std::shared_ptr<FabricModel> model = testing::TreeFabric(3, 3, 100, 1);
    model->traffic = traffic;
    model->priority = priority;
    model->max_priority_ratio = max_ratio;
    return model;
  }

  // A job's communication alone: its gradient over a NIC, two steps of one hop each way.
  static double SoloCommSeconds(const FabricModel& model) {
    return kGradientBytes / kNicBytesPerS + 2 * model.topology.LatencyS(0, 1);
  }

  // Compute seconds an iteration that give a job of kGpus GPUs `intensity`.
  static double ComputeFor(const FabricModel& model, double intensity) {
    return intensity * SoloCommSeconds(model) / kGpus;
  }

  static std::vector<JobPlacement> Placements() {
    std::vector<JobPlacement> placements(2);
    placements[0].job_id = 0;
    placements[0].parts = {{.server = 0, .gpus = 8}, {.server = 1, .gpus = 4}};
    placements[1].job_id = 1;
    placements[1].parts = {{.server = 1, .gpus = 4}, {.server = 2, .gpus = 8}};
    return placements;
  }

  // The rate of the job's slowest flow, read back from its figures (no overlap: all exposed).
  static double RateOf(const JobNetworkRound& f, const FabricModel& model) {
    const double latency_s = SoloCommSeconds(model) - kGradientBytes / kNicBytesPerS;
    return kGradientBytes / (f.network_s - latency_s);
  }

  // One round of the two jobs computing `compute_s` seconds an iteration: their slowest rates.
  static std::vector<double> Rates(FabricRound& round, const std::vector<double>& compute_s) {
    const std::vector<JobNetworkRound>& figures = round.Plan(
        Placements(), [&](size_t i) { return compute_s[i]; }, 300);
    return {RateOf(figures[0], round.model()), RateOf(figures[1], round.model())};
  }

  static void TrackBoth(FabricRound& round) {
    for (int64_t job : {0, 1}) round.Track(job, JobTraffic{kGradientBytes, 0});
  }
};

TEST_F(FabricPriority, TheMoreGpuIntensiveJobGetsTheLargerShareInTheRatioOfIntensities) {
  auto model = Model(LinkPriority::kGpuIntensity);
  FabricRound round(model);
  TrackBoth(round);
  const std::vector<double> rates = Rates(round, {ComputeFor(*model, 9), ComputeFor(*model, 3)});
  EXPECT_NEAR(rates[0] / rates[1], 3, 1e-6);
  EXPECT_NEAR(rates[0] + rates[1], kNicBytesPerS, 1e-6 * kNicBytesPerS) << "the link is full";
}

TEST_F(FabricPriority, MaxPriorityRatioCapsTheRatio) {
  auto model = Model(LinkPriority::kGpuIntensity, /*max_ratio=*/4);
  FabricRound round(model);
  TrackBoth(round);
  // Intensities 100 and 0.5: weights 4 and 1.
  const std::vector<double> rates =
      Rates(round, {ComputeFor(*model, 100), ComputeFor(*model, 0.5)});
  EXPECT_NEAR(rates[0] / rates[1], 4, 1e-6);
}

TEST_F(FabricPriority, FairGivesEqualSharesWhateverTheIntensities) {
  auto model = Model(LinkPriority::kFair);
  FabricRound round(model);
  TrackBoth(round);
  const std::vector<double> rates = Rates(round, {ComputeFor(*model, 9), ComputeFor(*model, 3)});
  EXPECT_NEAR(rates[0], kNicBytesPerS / 2, 1e-6 * kNicBytesPerS);
  EXPECT_NEAR(rates[1], kNicBytesPerS / 2, 1e-6 * kNicBytesPerS);
}

TEST_F(FabricPriority, AJobWhoseComputeChangesIsReweighedNextRound) {
  auto model = Model(LinkPriority::kGpuIntensity);
  FabricRound round(model);
  TrackBoth(round);
  const double even = ComputeFor(*model, 3);
  std::vector<double> rates = Rates(round, {even, even});
  EXPECT_NEAR(rates[0] / rates[1], 1, 1e-9);
  rates = Rates(round, {ComputeFor(*model, 6), even});
  EXPECT_NEAR(rates[0] / rates[1], 2, 1e-6);
  const std::vector<JobNetworkRound>& figures = round.Plan(
      Placements(), [&](size_t) { return even; }, 300);
  EXPECT_TRUE(figures[0].changed && figures[1].changed) << "both shares moved back";
  EXPECT_NEAR(RateOf(figures[0], *model), RateOf(figures[1], *model), 1e-6 * kNicBytesPerS);
}

TEST_F(FabricPriority, ThePhasedModelWeighsBurstsTheSameWay) {
  std::vector<std::vector<double>> network_s;  // by priority: each job's seconds an iteration
  for (LinkPriority priority : {LinkPriority::kFair, LinkPriority::kGpuIntensity}) {
    auto model = Model(priority, 16, TrafficModel::kPhased);
    FabricRound round(model);
    TrackBoth(round);
    const std::vector<double> compute_s = {ComputeFor(*model, 9), ComputeFor(*model, 3)};
    const std::vector<JobNetworkRound>& figures = round.Plan(
        Placements(), [&](size_t i) { return compute_s[i]; }, 300);
    network_s.push_back({figures[0].network_s, figures[1].network_s});
  }
  EXPECT_LT(network_s[1][0], network_s[0][0]) << "the intensive job's bursts end sooner";
  EXPECT_GT(network_s[1][1], network_s[0][1]) << "at the other job's expense";
}

TEST(PriorityWeight, IsTheIntensityWithinOneAndTheRatio) {
  EXPECT_DOUBLE_EQ(PriorityWeight(12, 1, 2, 16), 6);    // 12 GPUs x 1 s / 2 s
  EXPECT_DOUBLE_EQ(PriorityWeight(12, 10, 2, 16), 16);  // capped
  EXPECT_DOUBLE_EQ(PriorityWeight(2, 0.1, 2, 16), 1);   // never below 1
  EXPECT_DOUBLE_EQ(PriorityWeight(2, 0, 0, 16), 1);     // 0 / 0: no number, weight 1
  EXPECT_DOUBLE_EQ(PriorityWeight(2, 1, 0, 16), 16);    // no communication: the most
  EXPECT_DOUBLE_EQ(PriorityWeight(12, 1, 2, 1), 1);     // ratio 1: every weight equal
}

}  // namespace
}  // namespace troupe::scheduling
