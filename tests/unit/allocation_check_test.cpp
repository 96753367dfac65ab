// TakeAllocation (scheduling/allocation_check.hpp): an allocation troupe did not compute is
// leased only when it is sound. Each fault is refused with a reason that names the placement,
// and a refused allocation leaves the ledger exactly as it was; a sound one is taken whole.
#include "scheduling/allocation_check.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace troupe::scheduling {
namespace {

class AllocationCheck : public ::testing::Test {
 protected:
  AllocationCheck() : ledger_(std::vector<ServerShape>(2, ServerShape{8, 24, 500})) {
    for (int i = 0; i < 3; ++i) {
      jobs_[i].id = 10 + i;
      jobs_[i].gpus = i == 2 ? 4 : 2;
      offered_.push_back(&jobs_[i]);
    }
  }

  // The reason of the refusal, with the ledger checked unchanged; "" if it was taken.
  std::string Refusal(const std::vector<JobPlacement>& proposed) {
    const ServerShape before0 = ledger_.free(0), before1 = ledger_.free(1);
    const Status s = TakeAllocation(offered_, proposed, ledger_);
    if (s.ok()) return "";
    EXPECT_EQ(ledger_.free_gpus(), 16);
    EXPECT_EQ(ledger_.free(0).cpus, before0.cpus);
    EXPECT_EQ(ledger_.free(1).memory_gb, before1.memory_gb);
    return s.message();
  }

  SchedJob jobs_[3];
  std::vector<const SchedJob*> offered_;
  ClusterLedger ledger_;
};

TEST_F(AllocationCheck, SoundAllocationIsTakenWhole) {
  EXPECT_EQ(Refusal({{10, {{0, 2, 6, 125}}}, {12, {{0, 2, 6, 125}, {1, 2, 6, 125}}}}), "");
  EXPECT_EQ(ledger_.free_gpus(), 10);
  EXPECT_EQ(ledger_.free(0).gpus, 4);
  EXPECT_EQ(ledger_.free(0).cpus, 12);
  EXPECT_EQ(ledger_.free(1).memory_gb, 375);
}

TEST_F(AllocationCheck, ExactFitWithRoundingIsAccepted) {
  // Shares that add up to the whole server in floating point (0.1 and 0.2 are not exact).
  jobs_[2].gpus = 2;
  EXPECT_EQ(
      Refusal({{10, {{0, 2, 0.1, 100}}}, {11, {{0, 2, 0.2, 100}}}, {12, {{0, 2, 24 - 0.3, 300}}}}),
      "");
  EXPECT_EQ(ledger_.free(0).gpus, 2);
}

TEST_F(AllocationCheck, OvercommitIsRefusedWithTheServerAndWhatIsFree) {
  const std::string why = Refusal({{10, {{0, 2, 20, 100}}}, {11, {{0, 2, 6, 100}}}});
  EXPECT_EQ(why,
            "placement 1 (job 11) part 0: overcommits server 0: 6 CPUs wanted, 6 GPUs, 4 CPUs "
            "and 400 GB free");
  EXPECT_NE(Refusal({{12, {{1, 4, 6, 600}}}}).find("overcommits server 1: 600 GB of memory"),
            std::string::npos);
  jobs_[2].gpus = 8;
  EXPECT_NE(Refusal({{12, {{0, 8, 1, 1}}}, {10, {{0, 2, 1, 1}}}})
                .find("placement 1 (job 10) part 0: overcommits server 0: 2 GPUs wanted"),
            std::string::npos);
}

TEST_F(AllocationCheck, MalformedPlacementsAreRefusedWithTheirFault) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(Refusal({{99, {{0, 2, 1, 1}}}}), "placement 0 (job 99): not a job of this round");
  EXPECT_EQ(Refusal({{10, {{0, 2, 1, 1}}}, {10, {{1, 2, 1, 1}}}}),
            "placement 1 (job 10): the job is placed twice");
  EXPECT_EQ(Refusal({{10, {}}}), "placement 0 (job 10): no parts");
  EXPECT_EQ(Refusal({{10, {{2, 2, 1, 1}}}}),
            "placement 0 (job 10) part 0: server 2 does not exist (the cluster has 2)");
  EXPECT_EQ(Refusal({{12, {{0, 2, 1, 1}, {0, 2, 1, 1}}}}),
            "placement 0 (job 12) part 1: a second part on server 0");
  EXPECT_EQ(Refusal({{10, {{0, 0, 1, 1}, {1, 2, 1, 1}}}}),
            "placement 0 (job 10) part 0: gpus 0 (at least 1)");
  EXPECT_EQ(Refusal({{10, {{0, 2, -1, 1}}}}), "placement 0 (job 10) part 0: cpus -1");
  EXPECT_NE(Refusal({{10, {{0, 2, 1, nan}}}}).find("part 0: memory_gb"), std::string::npos);
  EXPECT_EQ(Refusal({{12, {{0, 2, 1, 1}}}}),
            "placement 0 (job 12): 2 GPUs, the job needs 4 (all or none)");
}

TEST_F(AllocationCheck, EmptyAllocationIsSound) {
  EXPECT_EQ(Refusal({}), "");
  EXPECT_EQ(ledger_.free_gpus(), 16);
}

}  // namespace
}  // namespace troupe::scheduling
