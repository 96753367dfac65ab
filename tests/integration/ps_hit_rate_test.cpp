// MEM-PS's own hit rate at the paper's cache-to-model proportion ("Distributed Hierarchical GPU
// Parameter Server for Massive Scale Deep Learning Ads Systems", MLSys '20: MEM-PS hits 46% of
// its lookups from batch 40 on, with memory for at most 40% of the model; docs/paramserver.md,
// "The paper's cache proportions"). The small run with MEM-PS holding 40% of the parameters it
// creates must hit a stable rate near that (measured 48%; the default budget, 5.5% of the
// model, gives about 10%).
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "runner/ps/ps_run.hpp"
#include "tests/integration/ps_fixture.hpp"

namespace troupe::testing {
namespace {

double MemHitRate(const std::vector<PsBatchRecord>& batches, size_t from, size_t to) {
  TierCounts sum;
  for (size_t i = from; i < to; ++i) sum += batches[i].counts;
  return sum.mem_keys == 0 ? 0 : static_cast<double>(sum.mem_hits) / sum.mem_keys;
}

TEST(PsHitRates, MemPsHoldingThePapersShareOfTheModelHitsNearItsRate) {
  // 4 nodes x 128 examples x 120 steps over 2,000 categories a field create 50,857 parameters;
  // 40% of them is 5,086 rows a node, at 96 bytes a row 488,232 bytes.
  PsRun run = RunPs(kSmallPsConfig,
                    {"paramserver.batch_size=128", "paramserver.batches=120",
                     "paramserver.holdout_examples=1024", "paramserver.mem_bytes_per_node=488232"});
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  const summaries::PsRunSummary& s = run.result.summary;
  const std::vector<PsBatchRecord>& b = run.result.batches;
  ASSERT_EQ(b.size(), 120u);
  const double share =
      static_cast<double>(s.mem_capacity_rows()) / static_cast<double>(s.parameters());
  const double early = MemHitRate(b, 40, 80), late = MemHitRate(b, 80, 120);
  std::printf(
      "[paper proportions] MEM-PS holds %.1f%% of %lld parameters; its own hit rate %.1f%% "
      "(batches 41-80), %.1f%% (81-120); HBM-PS %.1f%%, SSD-PS %.1f%%\n",
      100 * share, static_cast<long long>(s.parameters()), 100 * early, 100 * late,
      100 * s.hbm_hit_rate(), 100 * s.ssd_hit_rate());
  EXPECT_NEAR(share, 0.40, 0.01);
  EXPECT_GT(late, 0.36);
  EXPECT_LT(late, 0.52);
  EXPECT_NEAR(early, late, 0.03);  // it holds, as the paper's does after batch 40
}

}  // namespace
}  // namespace troupe::testing
