// The hierarchical parameter server across a fabric (docs/paramserver.md, "Across the fabric").
//
// Contract checked here: a trainer's pull from a shard on another server takes the rows' bytes
// over the route's bottleneck plus the route's latency when it is alone on its links, and never
// less; pulls that share a rack's uplink share it (each gets half while both run); a one-node run
// crosses no link, so even a crawling fabric leaves its every record as without one; a scarce
// fabric slows the steps and leaves the arithmetic bit for bit alone, a shard's crash included;
// emulated runs with a fabric are deterministic; a fabric that leaves a PS node out, or asks for
// weighted sharing, is refused in one line naming the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "paramserver/ctr_model.hpp"
#include "paramserver/partitioner.hpp"
#include "paramserver/reference_trainer.hpp"
#include "tests/integration/ps_fixture.hpp"

namespace troupe::testing {
namespace {

// Every stage but the pulls, pushes and all-reduce is near instant, and the GPU work is slow
// (milliseconds a step), so each step's pulls have the fabric to themselves until they are in,
// and every node starts step 0 at the same instant.
const std::vector<std::string> kFabricBound = {
    "paramserver.batches=3",
    "paramserver.disk_bytes_per_s=1e15",
    "paramserver.ssd_bytes_per_s=1e15",
    "paramserver.network_bytes_per_s=1e15",
    "paramserver.gpu_flops=1e9",
    "paramserver.hbm_bytes_per_s=1e9",
};

std::vector<std::string> With(std::vector<std::string> sets, const std::vector<std::string>& more) {
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

double BytesPerS(double gbps) { return gbps * 1e9 / 8; }

TEST(PsFabric, APullAloneTakesItsBytesOverTheNicPlusTheRoutesLatency) {
  // Two nodes in one rack, NICs of 0.1 Gb/s, 3 us a hop: node 0 pulls from shard 1 over server
  // 1's NIC up and server 0's NIC down, node 1 the other way; nothing else shares them.
  const PsRun run =
      RunPs(kSmallPsConfig, With(kFabricBound, {"paramserver.nodes=2", "fabric.server_nic_gbps=0.1",
                                                "fabric.nic_latency_us=3"}));
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  ASSERT_TRUE(run.plan.fabric);
  const double latency = run.plan.fabric->LatencyS(1, 0);
  EXPECT_DOUBLE_EQ(latency, 6e-6);
  ASSERT_EQ(run.result.batches.size(), 3u);
  for (int64_t s = 0; s < 3; ++s) {
    const double alone =
        std::max(PullBytes(run.plan, s, 1, 0), PullBytes(run.plan, s, 0, 1)) / BytesPerS(0.1) +
        latency;
    const double pull_s = run.result.batches[static_cast<size_t>(s)].pull_s;
    EXPECT_GT(alone, 1e-3);  // the rows take milliseconds: the NIC, not the 1e15 network rate
    EXPECT_GE(pull_s, alone * (1 - 1e-9)) << "step " << s;
    if (s == 0) {  // both nodes pull at once, each alone on its links
      EXPECT_NEAR(pull_s, alone, alone * 1e-9);
    }
  }
}

TEST(PsFabric, PullsThatShareARackUplinkEachGetHalfOfIt) {
  // Node 0 alone in rack 0, nodes 1 and 2 in rack 1; NICs of 1000 Gb/s, rack uplinks of 0.1.
  // Rack 1's uplink carries exactly node 0's pulls from shards 1 and 2, rack 0's exactly nodes 1
  // and 2's pulls from shard 0: on each, two flows at half the uplink until the smaller is in,
  // so the larger is in after both flows' bytes over the uplink.
  const PsRun run = RunPs(
      std::string(kSmallPsConfig) +
          "fabric { rack { first_server: 0 last_server: 0 } rack { first_server: 1 last_server: 2 }"
          " server_nic_gbps: 1000 tor_uplink_gbps: 0.1 nic_latency_us: 0 tor_latency_us: 0 }",
      With(kFabricBound, {"paramserver.nodes=3"}));
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  const PsPlan& p = run.plan;
  const double c = BytesPerS(0.1);
  const double into_rack0 = PullBytes(p, 0, 1, 0) + PullBytes(p, 0, 2, 0);
  const double out_of_rack0 = PullBytes(p, 0, 0, 1) + PullBytes(p, 0, 0, 2);
  const double shared = std::max(into_rack0, out_of_rack0) / c;
  const double alone = std::max({PullBytes(p, 0, 1, 0), PullBytes(p, 0, 2, 0),
                                 PullBytes(p, 0, 0, 1), PullBytes(p, 0, 0, 2)}) /
                       c;
  ASSERT_FALSE(run.result.batches.empty());
  EXPECT_NEAR(run.result.batches[0].pull_s, shared, shared * 1e-9);
  EXPECT_GT(run.result.batches[0].pull_s, alone * 1.2);  // not each at the uplink's full rate
}

TEST(PsFabric, AOneNodeRunCrossesNoLinkAndKeepsEveryRecord) {
  const PsRun without = RunPs(kSmallPsConfig, {"paramserver.nodes=1", "paramserver.batches=10"});
  const PsRun with =
      RunPs(kSmallPsConfig, {"paramserver.nodes=1", "paramserver.batches=10",
                             "fabric.server_nic_gbps=0.001", "fabric.nic_latency_us=1000"});
  ASSERT_TRUE(without.status.ok()) << without.status.message();
  ASSERT_TRUE(with.status.ok()) << with.status.message();
  ASSERT_EQ(with.result.batches.size(), without.result.batches.size());
  for (size_t s = 0; s < with.result.batches.size(); ++s) {
    const PsBatchRecord& a = with.result.batches[s];
    const PsBatchRecord& b = without.result.batches[s];
    EXPECT_EQ(a.end_s, b.end_s) << "step " << s;
    EXPECT_EQ(a.train_s, b.train_s) << "step " << s;
    EXPECT_EQ(a.loss, b.loss) << "step " << s;
    EXPECT_EQ(a.pull_s + a.push_s + a.allreduce_s, 0) << "step " << s;
  }
}

TEST(PsFabric, AScarceFabricSlowsTheStepsAndLeavesTheArithmeticAlone) {
  const std::vector<std::string> small = {"paramserver.batches=12"};
  const PsRun without = RunPs(kSmallPsConfig, small);
  const PsRun with =
      RunPs(kSmallPsConfig, With(small, {"fabric.servers_per_rack=2", "fabric.server_nic_gbps=1",
                                         "fabric.tor_oversubscription=4"}));
  ASSERT_TRUE(without.status.ok()) << without.status.message();
  ASSERT_TRUE(with.status.ok()) << with.status.message();
  // 1 Gb/s against the default 100: stage 4 becomes the slowest stage.
  EXPECT_GT(with.result.summary.train_s(), 10 * without.result.summary.train_s());
  EXPECT_GT(with.result.batches.back().end_s, 2 * without.result.batches.back().end_s);
  for (size_t s = 0; s < with.result.batches.size(); ++s) {
    EXPECT_EQ(with.result.batches[s].loss, without.result.batches[s].loss) << "step " << s;
  }
  EXPECT_EQ(paramserver::MaxAbsDifference(with.result.parameters, without.result.parameters), 0);
}

TEST(PsFabric, ACrashedShardOnAFabricLosesNoUpdate) {
  // ps:1 crashes half way through a run whose pushes cross the fabric (a push whose flow ends
  // after the crash goes to the dead incarnation and is re-sent to the next, as without one).
  const std::vector<std::string> fabric = {"paramserver.batches=20", "fabric.servers_per_rack=2",
                                           "fabric.server_nic_gbps=10"};
  const PsRun clean = RunPs(kSmallPsConfig, fabric);
  ASSERT_TRUE(clean.status.ok()) << clean.status.message();
  ASSERT_FALSE(clean.result.batches.empty());
  const double half = 0.5 * clean.result.batches.back().end_s;
  const PsRun crashed =
      RunPs(std::string(kSmallPsConfig) + "faults { fault { kind: crash target: \"ps:1\" at_s: " +
                std::to_string(half) + " duration_s: " + std::to_string(0.1 * half) + " } }",
            fabric);
  ASSERT_TRUE(crashed.status.ok()) << crashed.status.message();
  EXPECT_EQ(crashed.result.summary.crashes(), 1);
  EXPECT_EQ(crashed.result.summary.restarts(), 1);
  EXPECT_EQ(crashed.result.summary.updates_lost(), 0);
  EXPECT_EQ(paramserver::MaxAbsDifference(clean.result.parameters, crashed.result.parameters), 0);
}

TEST(PsFabric, AnEmulatedRunWithAFabricIsDeterministic) {
  const std::vector<std::string> sets = {"paramserver.batches=12", "fabric.servers_per_rack=2",
                                         "fabric.server_nic_gbps=2",
                                         "fabric.tor_oversubscription=4"};
  const PsRun a = RunPs(kSmallPsConfig, sets);
  const PsRun b = RunPs(kSmallPsConfig, sets);
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  ASSERT_TRUE(b.status.ok()) << b.status.message();
  ASSERT_EQ(a.result.batches.size(), b.result.batches.size());
  for (size_t s = 0; s < a.result.batches.size(); ++s) {
    const PsBatchRecord& x = a.result.batches[s];
    const PsBatchRecord& y = b.result.batches[s];
    EXPECT_EQ(x.end_s, y.end_s) << "step " << s;
    EXPECT_EQ(x.pull_s, y.pull_s) << "step " << s;
    EXPECT_EQ(x.push_s, y.push_s) << "step " << s;
    EXPECT_EQ(x.allreduce_s, y.allreduce_s) << "step " << s;
    EXPECT_GT(x.pull_s, 0) << "step " << s;
  }
}

TEST(PsFabric, AFabricThatLeavesAPsNodeOutIsRefusedInOneLine) {
  const PsRun left_out =
      RunPs(std::string(kSmallPsConfig) + "fabric { rack { first_server: 0 last_server: 2 } }");
  EXPECT_EQ(left_out.status.code(), Status::Code::kInvalidInput);
  EXPECT_NE(left_out.status.message().find("fabric.rack: server 3 is in no rack"),
            std::string::npos)
      << left_out.status.message();
  EXPECT_EQ(left_out.status.message().find('\n'), std::string::npos);
  const PsRun weighted = RunPs(kSmallPsConfig, {"fabric.link_priority=gpu_intensity"});
  EXPECT_EQ(weighted.status.code(), Status::Code::kInvalidInput);
  EXPECT_NE(weighted.status.message().find("fabric.link_priority"), std::string::npos);
}

}  // namespace
}  // namespace troupe::testing
