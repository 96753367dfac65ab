// Placement that follows the fabric's racks (scheduling/rack_placement.hpp, config
// fabric.placement): the order a spread takes servers in, the per-rack free GPUs the ledger keeps,
// the wait-or-spread rule, and every built-in mechanism's placements with racks set.
//
// Contract checked here: with racks, a job too large for any free server lies in one rack when a
// rack has its GPUs free (the tightest such rack), else in as few racks as the free GPUs allow; a
// job that one server holds is never spread; without racks the spread is the one troupe always
// had; a job that is not running waits for a consolidated slot until max_wait_s has passed.
#include "scheduling/rack_placement.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "scheduling/demand.hpp"
#include "scheduling/gpu_placement.hpp"
#include "scheduling/mechanism_registry.hpp"

namespace troupe::scheduling {
namespace {

// `racks` racks of `per_rack` servers of 4 GPUs, 12 CPUs, 200 GB.
std::vector<ServerShape> Servers(int racks, int per_rack) {
  return std::vector<ServerShape>(static_cast<size_t>(racks * per_rack), ServerShape{4, 12, 200});
}

std::shared_ptr<const RackLayout> Racks(int racks, int per_rack, double max_wait_s = 0) {
  std::vector<int32_t> rack_of_server;
  for (int r = 0; r < racks; ++r) rack_of_server.insert(rack_of_server.end(), per_rack, r);
  return std::make_shared<const RackLayout>(
      RackLayout::Make(std::move(rack_of_server), Servers(racks, per_rack), max_wait_s));
}

void TakeGpus(ClusterLedger& ledger, int32_t server, int32_t gpus) {
  ledger.Take(server, gpus, ledger.ProportionalCpus(server, gpus),
              ledger.ProportionalMemoryGb(server, gpus));
}

std::set<int32_t> RacksOf(const RackLayout& layout, const PlacementParts& parts) {
  std::set<int32_t> racks;
  for (const PlacementPart& p : parts) racks.insert(layout.rack_of_server[p.server]);
  return racks;
}

int32_t GpusOf(const PlacementParts& parts) {
  int32_t gpus = 0;
  for (const PlacementPart& p : parts) gpus += p.gpus;
  return gpus;
}

TEST(RackLayout, CountsTheFewestRacksAJobNeedsOnAnIdleCluster) {
  const auto layout = Racks(3, 2);  // 8 GPUs a rack
  EXPECT_EQ(layout->racks(), 3);
  EXPECT_EQ(layout->gpus_of_rack, (std::vector<int32_t>{8, 8, 8}));
  EXPECT_EQ(layout->MinRacks(1), 1);
  EXPECT_EQ(layout->MinRacks(8), 1);
  EXPECT_EQ(layout->MinRacks(9), 2);
  EXPECT_EQ(layout->MinRacks(24), 3);
  EXPECT_EQ(layout->MinRacks(100), 3);
}

TEST(RackLedger, KeepsEachRacksFreeGpusThroughTakeGiveAndReset) {
  ClusterLedger ledger(Servers(2, 2));
  ledger.SetRacks(Racks(2, 2));
  TakeGpus(ledger, 0, 3);
  TakeGpus(ledger, 3, 1);
  EXPECT_EQ(ledger.rack_free_gpus(0), 5);
  EXPECT_EQ(ledger.rack_free_gpus(1), 7);
  ledger.Give(0, 1, 0, 0);
  EXPECT_EQ(ledger.rack_free_gpus(0), 6);
  ledger.Reset();
  EXPECT_EQ(ledger.rack_free_gpus(0), 8);
  EXPECT_EQ(ledger.rack_free_gpus(1), 8);
}

// Rack 0 has 5 GPUs free over two servers, rack 1 has 6, rack 2 all 8: a 6-GPU job goes to rack
// 1 (the tightest that holds it), where the oblivious spread takes the fullest servers anywhere.
TEST(RackSpread, TakesTheTightestRackThatHoldsTheJob) {
  ClusterLedger ledger(Servers(3, 2));
  TakeGpus(ledger, 0, 1);  // rack 0: 3 + 2 free
  TakeGpus(ledger, 1, 2);
  TakeGpus(ledger, 2, 1);  // rack 1: 3 + 3 free
  TakeGpus(ledger, 3, 1);
  const PlacementParts oblivious = SpreadGpus(ledger, 6);
  EXPECT_EQ(GpusOf(oblivious), 6);
  EXPECT_EQ(oblivious[0].server, 4);  // rack 2's whole servers first, wherever they are
  ledger.SetRacks(Racks(3, 2));
  const PlacementParts packed = SpreadGpus(ledger, 6);
  EXPECT_EQ(GpusOf(packed), 6);
  EXPECT_EQ(RacksOf(*ledger.racks(), packed), (std::set<int32_t>{1}));
}

// No rack holds 10 GPUs (8 a rack): the spread takes two racks, the freest first.
TEST(RackSpread, AJobLargerThanEveryRackSpansTheFewest) {
  ClusterLedger ledger(Servers(3, 2));
  ledger.SetRacks(Racks(3, 2));
  TakeGpus(ledger, 0, 2);  // rack 0: 6 free
  const PlacementParts parts = SpreadGpus(ledger, 10);
  EXPECT_EQ(GpusOf(parts), 10);
  EXPECT_EQ(RacksOf(*ledger.racks(), parts), (std::set<int32_t>{1, 2}));
}

// On random occupancies: a job one free server holds is one part, and a job a rack holds lies in
// one rack; every placement has exactly the job's GPUs.
TEST(RackSpread, NeverSpreadsWhatAServerOrARackHolds) {
  std::mt19937 rng(7);
  int spread = 0;
  for (int trial = 0; trial < 300; ++trial) {
    ClusterLedger ledger(Servers(4, 4));
    ledger.SetRacks(Racks(4, 4));
    for (int32_t s = 0; s < ledger.server_count(); ++s) TakeGpus(ledger, s, rng() % 5);
    const int32_t gpus = 1 + static_cast<int32_t>(rng() % 16);
    if (gpus > ledger.free_gpus()) continue;
    const auto proportional = [&ledger](int32_t server, int32_t g) {
      return AuxDemand{ledger.ProportionalCpus(server, g), ledger.ProportionalMemoryGb(server, g)};
    };
    const PlacementParts parts = PlaceGpus(ledger, gpus, proportional);
    SCOPED_TRACE("trial " + std::to_string(trial) + ", " + std::to_string(gpus) + " GPUs");
    ASSERT_EQ(GpusOf(parts), gpus);
    if (ledger.SomeServerHasFreeGpus(gpus)) {
      EXPECT_EQ(parts.size(), 1u);
    }
    bool a_rack_holds = false;
    for (int32_t r = 0; r < 4; ++r) a_rack_holds = a_rack_holds || ledger.rack_free_gpus(r) >= gpus;
    if (a_rack_holds) {
      EXPECT_EQ(RacksOf(*ledger.racks(), parts).size(), 1u);
    }
    spread += parts.size() > 1;
  }
  EXPECT_GT(spread, 50) << "too few trials spread a job to test anything";
}

SchedJob Job(int64_t id, int32_t gpus, double arrival_s, double last_served_s = -1) {
  SchedJob job;
  job.id = id;
  job.gpus = gpus;
  job.arrival_s = arrival_s;
  job.last_served_s = last_served_s;
  job.iterations_total = job.iterations_left = 1000;
  job.iter_time_s = 1;
  return job;
}

// Rack 0 and rack 1 each have 4 of their 8 GPUs free: a 6-GPU job must span both.
ClusterLedger HalfFullRacks(double max_wait_s, double start_s) {
  ClusterLedger ledger(Servers(2, 2));
  ledger.SetRacks(Racks(2, 2, max_wait_s));
  TakeGpus(ledger, 0, 4);
  TakeGpus(ledger, 2, 4);
  ledger.set_round_start_s(start_s);
  return ledger;
}

TEST(WaitOrSpread, AWaitingJobSpreadsOnlyOnceItHasWaitedLongEnough) {
  const PlacementParts two_racks = {PlacementPart{1, 4}, PlacementPart{3, 2}};
  EXPECT_FALSE(MaySpread(HalfFullRacks(600, 1000), Job(1, 6, 500), two_racks));
  EXPECT_TRUE(MaySpread(HalfFullRacks(600, 1100), Job(1, 6, 500), two_racks));
  // Waiting counts from the end of the last round it ran in.
  EXPECT_FALSE(MaySpread(HalfFullRacks(600, 1100), Job(1, 6, 0, 900), two_racks));
  // A job that ran in the round before keeps running.
  EXPECT_TRUE(MaySpread(HalfFullRacks(600, 1000), Job(1, 6, 500, 1000), two_racks));
  // No wait, or no racks: always.
  EXPECT_TRUE(MaySpread(HalfFullRacks(0, 1000), Job(1, 6, 500), two_racks));
  ClusterLedger plain(Servers(2, 2));
  EXPECT_TRUE(MaySpread(plain, Job(1, 6, 500), two_racks));
}

TEST(WaitOrSpread, AJobLargerThanARackSpreadsOverTheFewestRacksAtOnce) {
  ClusterLedger ledger(Servers(3, 2));
  ledger.SetRacks(Racks(3, 2, 3600));
  ledger.set_round_start_s(100);
  const PlacementParts two = {PlacementPart{0, 4}, PlacementPart{1, 4}, PlacementPart{2, 2}};
  const PlacementParts three = {PlacementPart{0, 4}, PlacementPart{2, 4}, PlacementPart{4, 2}};
  EXPECT_TRUE(MaySpread(ledger, Job(1, 10, 50), two));
  EXPECT_FALSE(MaySpread(ledger, Job(1, 10, 50), three));
  // A 3-GPU job split over two servers of one rack waits: one server holds it when free.
  EXPECT_FALSE(MaySpread(ledger, Job(2, 3, 50), {PlacementPart{0, 2}, PlacementPart{1, 1}}));
}

// Two types: the job's faster one has 2 + 2 GPUs free on two servers, the other one server with
// all 8 free. A waiting 4-GPU job is not spread over the first: it takes the second's server.
TEST(WaitOrSpread, AJobHeldBackOnOneTypeTakesAServerOfTheNext) {
  std::vector<ServerShape> servers = {ServerShape{4, 12, 200, 0}, ServerShape{4, 12, 200, 0},
                                      ServerShape{8, 24, 400, 1}};
  ClusterLedger ledger(servers);
  ledger.SetRacks(std::make_shared<const RackLayout>(RackLayout::Make({0, 0, 1}, servers, 600)));
  ledger.set_round_start_s(100);
  TakeGpus(ledger, 0, 2);
  TakeGpus(ledger, 1, 2);
  SchedJob job = Job(1, 4, 50);
  job.type_speed = std::make_shared<const std::vector<double>>(std::vector<double>{2, 1});
  const auto proportional = [&ledger](int32_t server, int32_t g) {
    return AuxDemand{ledger.ProportionalCpus(server, g), ledger.ProportionalMemoryGb(server, g)};
  };
  const PlacementParts parts = PlaceGpusByType(ledger, job, proportional);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].server, 2);
  EXPECT_EQ(parts[0].gpus, 4);
}

class EveryMechanism : public ::testing::TestWithParam<std::string> {};

// Each mechanism places four 1-GPU jobs (best fit: all on server 0), then a 6-GPU job no 4-GPU
// server holds: over the two servers with the most free GPUs without racks (one in each rack),
// within rack 1 with them.
TEST_P(EveryMechanism, SpreadsWithinOneRackWhenTheLedgerHasRacks) {
  for (const bool racks : {false, true}) {
    ClusterLedger ledger(Servers(2, 2));
    if (racks) ledger.SetRacks(Racks(2, 2));
    const std::unique_ptr<Mechanism> mechanism = MakeMechanism(GetParam());
    std::vector<SchedJob> jobs;
    for (int32_t s = 0; s < 4; ++s) jobs.push_back(Job(s, 1, 0));
    jobs.push_back(Job(10, 6, 0));
    std::vector<const SchedJob*> ordered;
    for (const SchedJob& job : jobs) ordered.push_back(&job);
    ledger.set_round_start_s(0);
    mechanism->StartRound(0, 0);
    const std::vector<JobPlacement> placements = mechanism->PlaceRound(ordered, ledger);
    const JobPlacement* large = nullptr;
    for (const JobPlacement& p : placements) {
      if (p.job_id == 10) large = &p;
    }
    SCOPED_TRACE(GetParam() + (racks ? " with racks" : " without racks"));
    ASSERT_NE(large, nullptr);
    EXPECT_EQ(GpusOf(large->parts), 6);
    std::set<int32_t> spanned;
    for (const PlacementPart& p : large->parts) spanned.insert(p.server / 2);
    EXPECT_EQ(spanned.size(), racks ? 1u : 2u);
  }
}

INSTANTIATE_TEST_SUITE_P(RackPlacement, EveryMechanism,
                         ::testing::Values("proportional", "greedy", "tune", "opt", "gavel_las"));

}  // namespace
}  // namespace troupe::scheduling
