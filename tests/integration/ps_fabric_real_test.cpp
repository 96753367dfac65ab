// The hierarchical parameter server across a fabric in real mode (docs/paramserver.md, "Across
// the fabric"): the fabric actor times the trainers' pulls on the wall clock.
//
// Contract checked here: with NICs of 0.01 Gb/s, each step's pull takes at least its rows' bytes
// over the NIC (tens of milliseconds of wall time, where the modelled network would give
// microseconds) and not many times more; the losses are those of the emulated run.
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "paramserver/ctr_model.hpp"
#include "paramserver/partitioner.hpp"
#include "tests/integration/ps_fixture.hpp"

namespace troupe::testing {
namespace {

TEST(PsFabricReal, APullTakesTheWallSecondsItsBytesNeedAtItsShare) {
  const std::vector<std::string> sets = {"paramserver.nodes=2", "paramserver.batches=3",
                                         "fabric.server_nic_gbps=0.01"};
  std::vector<std::string> real = sets;
  real.push_back("run.mode=real");
  const PsRun run = RunPs(kSmallPsConfig, real);
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  const PsRun emulated = RunPs(kSmallPsConfig, sets);
  ASSERT_TRUE(emulated.status.ok()) << emulated.status.message();
  ASSERT_EQ(run.result.batches.size(), 3u);
  const double nic = 0.01e9 / 8;
  for (int64_t s = 0; s < 3; ++s) {
    const double alone = std::max(PullBytes(run.plan, s, 1, 0), PullBytes(run.plan, s, 0, 1)) / nic;
    const PsBatchRecord& b = run.result.batches[static_cast<size_t>(s)];
    EXPECT_GT(alone, 0.01) << "step " << s;
    EXPECT_GE(b.pull_s, alone) << "step " << s;
    EXPECT_LE(b.pull_s, 5 * alone) << "step " << s;
    EXPECT_EQ(b.loss, emulated.result.batches[static_cast<size_t>(s)].loss) << "step " << s;
  }
}

}  // namespace
}  // namespace troupe::testing
