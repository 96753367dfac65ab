// GPU placement (scheduling/gpu_placement.hpp) and the GPU-proportional mechanism
// (scheduling/proportional.hpp), on hand-made clusters with exact expected placements.
//
// Contract checked here: a job that fits one server is consolidated on the best fit (fewest free
// GPUs, ties lowest index), one whose CPUs or memory do not fit there moves to the next best;
// a job that fits no single server is spread over the fewest servers, most free GPUs first; a
// job that cannot be placed gets no parts and leaves the ledger unchanged; the mechanism skips a
// job it cannot place and goes on with the next, and its ledger ends holding exactly the
// placements it returns. The randomised properties are in scheduling_test.cpp.
#include <gtest/gtest.h>

#include <vector>

#include "scheduling/gpu_placement.hpp"
#include "scheduling/proportional.hpp"

namespace troupe::scheduling {
namespace {

std::vector<ServerShape> Synergy(int servers) {
  return std::vector<ServerShape>(servers, ServerShape{8, 24, 500});
}

AuxDemandFn Proportional(const ClusterLedger& ledger) {
  return [&ledger](int32_t server, int32_t gpus) {
    return AuxDemand{ledger.ProportionalCpus(server, gpus),
                     ledger.ProportionalMemoryGb(server, gpus)};
  };
}

// Takes GPUs (with their proportional share) until each server has `free[s]` GPUs free.
void LeaveFree(ClusterLedger& ledger, const std::vector<int32_t>& free) {
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    const int32_t g = ledger.shape(s).gpus - free[s];
    ledger.Take(s, g, ledger.ProportionalCpus(s, g), ledger.ProportionalMemoryGb(s, g));
  }
}

// (server, gpus) of each part, in the order PlaceGpus returned them.
std::vector<std::pair<int32_t, int32_t>> Parts(const PlacementParts& parts) {
  std::vector<std::pair<int32_t, int32_t>> out;
  for (const PlacementPart& p : parts) out.emplace_back(p.server, p.gpus);
  return out;
}

using PartList = std::vector<std::pair<int32_t, int32_t>>;

TEST(PlaceGpusTest, ConsolidatesOnTheServerWithFewestFreeGpusThatHoldsTheJob) {
  ClusterLedger ledger(Synergy(5));
  LeaveFree(ledger, {8, 3, 5, 3, 1});
  const AuxDemandFn demand = Proportional(ledger);
  EXPECT_EQ(Parts(PlaceGpus(ledger, 1, demand)), (PartList{{4, 1}}));
  EXPECT_EQ(Parts(PlaceGpus(ledger, 2, demand)), (PartList{{1, 2}}));  // 1 and 3 tie: lowest
  EXPECT_EQ(Parts(PlaceGpus(ledger, 3, demand)), (PartList{{1, 3}}));
  EXPECT_EQ(Parts(PlaceGpus(ledger, 4, demand)), (PartList{{2, 4}}));
  EXPECT_EQ(Parts(PlaceGpus(ledger, 6, demand)), (PartList{{0, 6}}));
  EXPECT_EQ(Parts(PlaceGpus(ledger, 8, demand)), (PartList{{0, 8}}));
}

TEST(PlaceGpusTest, PartsCarryTheirProportionalShare) {
  ClusterLedger ledger(Synergy(2));
  const PlacementParts parts = PlaceGpus(ledger, 3, Proportional(ledger));
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].server, 0);
  EXPECT_DOUBLE_EQ(parts[0].cpus, 9);
  EXPECT_DOUBLE_EQ(parts[0].memory_gb, 187.5);
}

TEST(PlaceGpusTest, SkipsABestFitWhoseCpusOrMemoryAreShort) {
  // 4 CPUs and 50 GB per GPU. 3 GPUs want 12 CPUs and 150 GB: server 0 (3 GPUs, 8 CPUs free)
  // lacks the CPUs, server 1 (3 GPUs, 100 GB free) the memory; server 2 (5 GPUs free) has both.
  ClusterLedger ledger({{8, 32, 400}, {8, 32, 400}, {8, 32, 400}});
  ledger.Take(0, 5, 24, 0);
  ledger.Take(1, 5, 0, 300);
  ledger.Take(2, 3, 0, 0);
  const AuxDemandFn fixed = [](int32_t, int32_t g) { return AuxDemand{4.0 * g, 50.0 * g}; };
  EXPECT_EQ(Parts(PlaceGpus(ledger, 3, fixed)), (PartList{{2, 3}}));
  // 2 GPUs want 8 CPUs and 100 GB: server 0 holds that exactly, and is the best fit.
  EXPECT_EQ(Parts(PlaceGpus(ledger, 2, fixed)), (PartList{{0, 2}}));
}

TEST(PlaceGpusTest, SpreadsOverTheFewestServersMostFreeFirst) {
  ClusterLedger ledger(Synergy(4));
  LeaveFree(ledger, {5, 6, 2, 7});
  const AuxDemandFn demand = Proportional(ledger);
  // 12 GPUs: 7 + 6 >= 12, two servers; the second gives only what is still needed.
  EXPECT_EQ(Parts(PlaceGpus(ledger, 12, demand)), (PartList{{3, 7}, {1, 5}}));
  // 19 GPUs: 7 + 6 + 5 = 18 < 19, so all four.
  EXPECT_EQ(Parts(PlaceGpus(ledger, 19, demand)), (PartList{{3, 7}, {1, 6}, {0, 5}, {2, 1}}));
  EXPECT_EQ(Parts(PlaceGpus(ledger, 20, demand)), (PartList{{3, 7}, {1, 6}, {0, 5}, {2, 2}}));
}

TEST(PlaceGpusTest, SixteenGpusOnAnEmptyClusterTakeTwoWholeServers) {
  ClusterLedger ledger(Synergy(4));
  const PlacementParts parts = PlaceGpus(ledger, 16, Proportional(ledger));
  EXPECT_EQ(Parts(parts), (PartList{{0, 8}, {1, 8}}));
  EXPECT_DOUBLE_EQ(parts[1].cpus, 24);
  EXPECT_DOUBLE_EQ(parts[1].memory_gb, 500);
}

TEST(PlaceGpusTest, AJobThatCannotBePlacedGetsNothingAndChangesNothing) {
  ClusterLedger ledger(Synergy(2));
  LeaveFree(ledger, {3, 4});
  const AuxDemandFn demand = Proportional(ledger);
  EXPECT_TRUE(PlaceGpus(ledger, 8, demand).empty());  // 7 free in all
  EXPECT_TRUE(PlaceGpus(ledger, 0, demand).empty());
  EXPECT_TRUE(PlaceGpus(ledger, -1, demand).empty());
  // GPUs are free but no server has the CPUs a part of them would need.
  const AuxDemandFn greedy = [](int32_t, int32_t g) { return AuxDemand{100.0 * g, 0}; };
  EXPECT_TRUE(PlaceGpus(ledger, 1, greedy).empty());
  EXPECT_EQ(ledger.free_gpus(), 7);
  EXPECT_EQ(ledger.free(0).gpus, 3);
  EXPECT_EQ(ledger.free(1).gpus, 4);
}

SchedJob Job(int64_t id, int32_t gpus) {
  SchedJob j;
  j.id = id;
  j.arrival_s = static_cast<double>(id);
  j.gpus = gpus;
  return j;
}

std::vector<int64_t> PlacedIds(const std::vector<JobPlacement>& placements) {
  std::vector<int64_t> ids;
  for (const JobPlacement& p : placements) ids.push_back(p.job_id);
  return ids;
}

TEST(ProportionalMechanismTest, SkipsAJobThatDoesNotFitAndPlacesALaterOne) {
  // Two 4-GPU servers: jobs 1 and 2 leave one GPU free on each; job 3 (4 GPUs) cannot have its
  // GPUs this round and is skipped; job 4 (1 GPU) still gets the best fit, server 0.
  ClusterLedger ledger({{4, 12, 250}, {4, 12, 250}});
  const std::vector<SchedJob> jobs = {Job(1, 3), Job(2, 3), Job(3, 4), Job(4, 1)};
  std::vector<const SchedJob*> queue;
  for (const SchedJob& j : jobs) queue.push_back(&j);
  ProportionalMechanism mechanism;
  const std::vector<JobPlacement> placements = mechanism.PlaceRound(queue, ledger);
  ASSERT_EQ(PlacedIds(placements), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(Parts(placements[0].parts), (PartList{{0, 3}}));
  EXPECT_EQ(Parts(placements[1].parts), (PartList{{1, 3}}));
  EXPECT_EQ(Parts(placements[2].parts), (PartList{{0, 1}}));
  EXPECT_DOUBLE_EQ(placements[2].cpus(), 3);
  EXPECT_DOUBLE_EQ(placements[2].memory_gb(), 62.5);
  // The ledger holds exactly what was placed.
  EXPECT_EQ(ledger.free_gpus(), 1);
  EXPECT_EQ(ledger.free(1).gpus, 1);
  EXPECT_DOUBLE_EQ(ledger.free(1).cpus, 3);
}

TEST(ProportionalMechanismTest, MultiGpuJobsConsolidateAndSpreadInQueueOrder) {
  // 16 GPUs on two servers: the 8-GPU job takes server 0 whole; the 4-GPU jobs go to server 1
  // until it is full; the 2-GPU job finds nothing left; the round ends with the cluster full.
  ClusterLedger ledger(Synergy(2));
  const std::vector<SchedJob> jobs = {Job(10, 8), Job(11, 4), Job(12, 4), Job(13, 2), Job(14, 1)};
  std::vector<const SchedJob*> queue;
  for (const SchedJob& j : jobs) queue.push_back(&j);
  const std::vector<JobPlacement> placements = ProportionalMechanism().PlaceRound(queue, ledger);
  ASSERT_EQ(PlacedIds(placements), (std::vector<int64_t>{10, 11, 12}));
  EXPECT_EQ(Parts(placements[0].parts), (PartList{{0, 8}}));
  EXPECT_EQ(Parts(placements[1].parts), (PartList{{1, 4}}));
  EXPECT_EQ(Parts(placements[2].parts), (PartList{{1, 4}}));
  EXPECT_EQ(ledger.free_gpus(), 0);
}

TEST(ProportionalMechanismTest, AGangJobSpansServersWhenNoneHoldsIt) {
  ClusterLedger ledger(Synergy(3));
  const std::vector<SchedJob> jobs = {Job(1, 6), Job(2, 6), Job(3, 8)};
  std::vector<const SchedJob*> queue;
  for (const SchedJob& j : jobs) queue.push_back(&j);
  const std::vector<JobPlacement> placements = ProportionalMechanism().PlaceRound(queue, ledger);
  ASSERT_EQ(PlacedIds(placements), (std::vector<int64_t>{1, 2, 3}));
  // Jobs 1 and 2 take six GPUs of servers 0 and 1; job 3 needs the 8 GPUs of server 2.
  EXPECT_EQ(Parts(placements[2].parts), (PartList{{2, 8}}));
  // Now a 4-GPU job finds 2 + 2 free: spread over servers 0 and 1 (both have 2; lowest first).
  const SchedJob late = Job(4, 4);
  const std::vector<JobPlacement> more = ProportionalMechanism().PlaceRound({&late}, ledger);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(Parts(more[0].parts), (PartList{{0, 2}, {1, 2}}));
  EXPECT_EQ(more[0].gpus(), 4);
  EXPECT_DOUBLE_EQ(more[0].cpus(), 12);
  EXPECT_DOUBLE_EQ(more[0].memory_gb(), 250);
  EXPECT_EQ(ledger.free_gpus(), 0);
}

}  // namespace
}  // namespace troupe::scheduling
