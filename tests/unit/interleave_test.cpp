// Interleaving placement (config fabric.placement rule interleave; fabric/interleave.hpp,
// scheduling/interleave_scorer.hpp, scheduling/interleave_placement.hpp): CASSINI's compatibility
// score on one link, the time-shifts the affinity graph gives, and the placement that picks the
// rack whose traffic its bursts interleave with.
//
// Contract checked here: bursts that fit side by side in a period score 1 once rotated, bursts that
// each fill more than half of it never do; one shift per job suits every link it shares; a shifted
// job keeps its shift; every mechanism's spread goes where its bursts interleave with the jobs
// already there rather than where they collide, and is the consolidating spread where no traffic
// is around.
#include "fabric/interleave.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "scheduling/demand.hpp"
#include "scheduling/fabric_round.hpp"
#include "scheduling/gpu_placement.hpp"
#include "scheduling/interleave_scorer.hpp"
#include "scheduling/mechanism_registry.hpp"
#include "scheduling/rack_placement.hpp"
#include "tests/unit/tree_fabric.hpp"

namespace troupe {
namespace {

using fabric::Arc;
using fabric::CycleJob;
using fabric::LinkShare;

constexpr double kCapacity = 12.5e9;  // 100 Gb/s

TEST(InterleaveScore, BurstsThatFitSideBySideScoreOneOnceRotated) {
  // Each sends 0.4 s of a 1 s period at the link's capacity: together they fill 0.8 s of it.
  const Arc a{.compute_s = 0.6, .burst_s = 0.4, .demand = kCapacity, .shift_s = 0};
  Arc b = a;
  EXPECT_LT(fabric::LinkScore(kCapacity, {a, b}), 0.6);  // aligned, they collide all the burst
  const fabric::ShiftChoice best =
      fabric::BestShift(b.compute_s, b.burst_s,
                        {LinkShare{.capacity = kCapacity, .demand = kCapacity, .others = {a}}});
  EXPECT_DOUBLE_EQ(best.score, 1);
  b.shift_s = best.shift_s;
  EXPECT_DOUBLE_EQ(fabric::LinkScore(kCapacity, {a, b}), 1);
}

TEST(InterleaveScore, BurstsThatEachFillMoreThanHalfThePeriodCannotInterleave) {
  const Arc a{.compute_s = 0.4, .burst_s = 0.6, .demand = kCapacity, .shift_s = 0};
  const fabric::ShiftChoice best = fabric::BestShift(
      0.4, 0.6, {LinkShare{.capacity = kCapacity, .demand = kCapacity, .others = {a}}});
  EXPECT_LT(best.score, 0.95);
  // Half the link each: they fit side by side whatever the shift.
  const Arc half{.compute_s = 0.4, .burst_s = 0.6, .demand = kCapacity / 2, .shift_s = 0};
  EXPECT_DOUBLE_EQ(fabric::LinkScore(kCapacity, {half, half}), 1);
}

TEST(InterleaveScore, AJobAloneOnItsLinksScoresOne) {
  EXPECT_DOUBLE_EQ(fabric::LinkScore(kCapacity, {}), 1);
  EXPECT_DOUBLE_EQ(fabric::BestShift(0.4, 0.6, {LinkShare{kCapacity, kCapacity, {}}}).score, 1);
}

// A on link 0 sends in [0, 0.3) of each second, C on link 1 in [0.3, 0.6); B crosses both and
// sends 0.3 s: only [0.6, 1) is free on both, so its one shift must put its burst there.
TEST(InterleaveShifts, OneShiftSuitsEveryLinkAJobShares) {
  std::vector<CycleJob> jobs(3);
  jobs[0] = CycleJob{.compute_s = 0.7,
                     .burst_s = 0.3,
                     .link_demand = {{0, kCapacity}},
                     .shift_s = 0.3};  // compute [0.3, 1), burst [0, 0.3)
  jobs[1] = CycleJob{.compute_s = 0.7,
                     .burst_s = 0.3,
                     .link_demand = {{0, kCapacity}, {1, kCapacity}},
                     .shift_s = -1};
  jobs[2] = CycleJob{.compute_s = 0.7,
                     .burst_s = 0.3,
                     .link_demand = {{1, kCapacity}},
                     .shift_s = 0.6};  // burst [0.3, 0.6)
  fabric::AssignShifts({kCapacity, kCapacity}, &jobs);
  EXPECT_DOUBLE_EQ(jobs[0].shift_s, 0.3);  // kept
  EXPECT_DOUBLE_EQ(jobs[2].shift_s, 0.6);
  ASSERT_GE(jobs[1].shift_s, 0);
  const auto arc = [](const CycleJob& j, int32_t link) {
    for (const auto& [l, d] : j.link_demand) {
      if (l == link) return Arc{j.compute_s, j.burst_s, d, j.shift_s};
    }
    return Arc{};
  };
  EXPECT_DOUBLE_EQ(fabric::LinkScore(kCapacity, {arc(jobs[0], 0), arc(jobs[1], 0)}), 1);
  EXPECT_DOUBLE_EQ(fabric::LinkScore(kCapacity, {arc(jobs[2], 1), arc(jobs[1], 1)}), 1);
}

// A chain A - B - C (A and B share link 0, B and C link 1) with no shifts: A, first, gets 0, and
// the traversal shifts B against A, then C against B; another component starts at 0 too.
TEST(InterleaveShifts, TheTraversalShiftsAComponentFromItsFirstJob) {
  std::vector<CycleJob> jobs = {
      {.compute_s = 0.5, .burst_s = 0.5, .link_demand = {{0, kCapacity}}},
      {.compute_s = 0.5, .burst_s = 0.5, .link_demand = {{0, kCapacity}, {1, kCapacity}}},
      {.compute_s = 0.5, .burst_s = 0.5, .link_demand = {{1, kCapacity}}},
      {.compute_s = 0.5, .burst_s = 0.5, .link_demand = {{2, kCapacity}}},
  };
  fabric::AssignShifts({kCapacity, kCapacity, kCapacity}, &jobs);
  EXPECT_DOUBLE_EQ(jobs[0].shift_s, 0);
  EXPECT_DOUBLE_EQ(jobs[3].shift_s, 0);
  const Arc a{0.5, 0.5, kCapacity, jobs[0].shift_s}, b{0.5, 0.5, kCapacity, jobs[1].shift_s},
      c{0.5, 0.5, kCapacity, jobs[2].shift_s};
  EXPECT_DOUBLE_EQ(fabric::LinkScore(kCapacity, {a, b}), 1);
  EXPECT_DOUBLE_EQ(fabric::LinkScore(kCapacity, {b, c}), 1);
}

}  // namespace

namespace scheduling {
namespace {

// 2 racks of 2 servers of 8 GPUs, 100 Gb/s NICs, racks not oversubscribed.
std::shared_ptr<const FabricModel> TwoRacks() {
  std::shared_ptr<FabricModel> model = testing::TreeFabric(4, 2, 100, 1);
  model->traffic = TrafficModel::kPhased;
  model->interleave_candidates = 8;
  return model;
}

SchedJob Job(int64_t id, int32_t gpus, double compute_s) {
  SchedJob job;
  job.id = id;
  job.gpus = gpus;
  job.iter_time_s = compute_s;
  job.iterations_total = job.iterations_left = 1000;
  return job;
}

// Over two servers a hierarchical ring sends the whole gradient each way: at 12.5 GB/s, a burst
// of `burst_s` seconds.
JobTraffic TrafficFor(double burst_s) { return JobTraffic{burst_s * kCapacity, 0}; }

// The hand-made round: job 1 (0.4 s compute, 0.6 s bursts) runs on servers 0 and 1 (rack 0), job
// 2 (0.8 s compute, 0.2 s bursts) on servers 2 and 3 (rack 1), 4 GPUs on each; both noted by the
// ledger's scorer. Job 3 is like job 1: it collides with job 1 whatever the shift, and its bursts
// fit between job 2's.
struct Round {
  explicit Round(bool interleave) : fabric(TwoRacks()), ledger(Servers()) {
    fabric.Track(1, TrafficFor(0.6));
    fabric.Track(2, TrafficFor(0.2));
    fabric.Track(3, TrafficFor(0.6));
    ledger.SetRacks(std::make_shared<const RackLayout>(
        RackLayout::Make({0, 0, 1, 1}, Servers(), /*max_wait_s=*/0)));
    if (interleave) ledger.SetSpreadScorer(std::make_shared<InterleaveScorer>(fabric, 8));
    Place(jobs[0], {0, 1});
    Place(jobs[1], {2, 3});
  }
  static std::vector<ServerShape> Servers() { return std::vector<ServerShape>(4, {8, 24, 500}); }
  void Place(const SchedJob& job, std::vector<int32_t> servers) {
    PlacementParts parts;
    for (int32_t s : servers) {
      parts.push_back({s, 4, ledger.ProportionalCpus(s, 4), ledger.ProportionalMemoryGb(s, 4)});
      ledger.Take(s, 4, parts.back().cpus, parts.back().memory_gb);
    }
    if (ledger.spread_scorer() != nullptr) ledger.spread_scorer()->Note(ledger, job, parts);
  }
  FabricRound fabric;
  ClusterLedger ledger;
  std::vector<SchedJob> jobs = {Job(1, 8, 0.4), Job(2, 8, 0.8), Job(3, 8, 0.4)};
};

std::set<int32_t> ServersOf(const PlacementParts& parts) {
  std::set<int32_t> servers;
  for (const PlacementPart& p : parts) servers.insert(p.server);
  return servers;
}

// The property the rule is for: never both jobs whose bursts overlap on one link when a rack
// where they interleave is free. Without the scorer the spread is the consolidating one (rack 0,
// the lower of two equally free racks), so the test can tell the two apart.
TEST(InterleavePlacement, PicksTheRackWhoseTrafficItsBurstsInterleaveWith) {
  Round consolidate(false);
  EXPECT_EQ(ServersOf(SpreadGpus(consolidate.ledger, 8, &consolidate.jobs[2])),
            (std::set<int32_t>{0, 1}));
  Round interleave(true);
  const InterleaveScorer& scorer =
      *static_cast<InterleaveScorer*>(interleave.ledger.spread_scorer());
  const SchedJob& job = interleave.jobs[2];
  EXPECT_LT(scorer.Score(interleave.ledger, job, {{0, 4}, {1, 4}}), 0.95);
  EXPECT_DOUBLE_EQ(scorer.Score(interleave.ledger, job, {{2, 4}, {3, 4}}), 1);
  EXPECT_EQ(ServersOf(SpreadGpus(interleave.ledger, 8, &job)), (std::set<int32_t>{2, 3}));
}

TEST(InterleavePlacement, WithNoTrafficAroundItIsTheConsolidatingSpread) {
  Round round(true);
  round.ledger.Reset();  // forgets the noted jobs; their GPUs are taken again below
  for (int32_t s = 0; s < 4; ++s) {
    round.ledger.Take(s, 4, round.ledger.ProportionalCpus(s, 4),
                      round.ledger.ProportionalMemoryGb(s, 4));
  }
  EXPECT_EQ(ServersOf(SpreadGpus(round.ledger, 8, &round.jobs[2])), (std::set<int32_t>{0, 1}));
}

class EveryMechanismInterleaves : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryMechanismInterleaves, SpreadsBesideTheJobItsBurstsInterleaveWith) {
  Round round(true);
  const std::unique_ptr<Mechanism> mechanism = MakeMechanism(GetParam());
  round.ledger.set_round_start_s(0);
  mechanism->StartRound(0, 0);
  const std::vector<JobPlacement> placements =
      mechanism->PlaceRound({&round.jobs[2]}, round.ledger);
  SCOPED_TRACE(GetParam());
  ASSERT_EQ(placements.size(), 1u);
  EXPECT_EQ(ServersOf(placements[0].parts), (std::set<int32_t>{2, 3}));
}

INSTANTIATE_TEST_SUITE_P(Interleave, EveryMechanismInterleaves,
                         ::testing::Values("proportional", "greedy", "tune", "opt", "gavel_las"));

// The phased model runs each round's jobs from the shifts the traversal gave: two jobs whose
// bursts fit side by side on the NICs they share lose nothing to each other.
TEST(InterleaveRound, ShiftedJobsSharingNicsDoNotSlowEachOther) {
  FabricRound round(TwoRacks());
  round.Track(1, TrafficFor(0.4));
  round.Track(2, TrafficFor(0.4));
  const std::vector<JobPlacement> placements = {
      JobPlacement{.job_id = 1, .parts = {{0, 4}, {1, 4}}},
      JobPlacement{.job_id = 2, .parts = {{0, 4}, {1, 4}}}};
  const std::vector<JobNetworkRound>& figures = round.Plan(
      placements, [](size_t) { return 0.6; }, 300);
  ASSERT_EQ(figures.size(), 2u);
  for (const JobNetworkRound& f : figures) EXPECT_DOUBLE_EQ(f.network_s, f.solo_s);
  // Unshifted (the other rules), the same two jobs collide on every burst.
  auto fair = std::make_shared<FabricModel>(*TwoRacks());
  fair->interleave_candidates = 0;
  FabricRound aligned(fair);
  aligned.Track(1, TrafficFor(0.4));
  aligned.Track(2, TrafficFor(0.4));
  const std::vector<JobNetworkRound>& collide = aligned.Plan(
      placements, [](size_t) { return 0.6; }, 300);
  EXPECT_GT(collide[0].network_s, 1.5 * collide[0].solo_s);
}

}  // namespace
}  // namespace scheduling
}  // namespace troupe
