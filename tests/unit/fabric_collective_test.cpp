// The all-reduce's traffic (fabric/collective.hpp): a ring of S bytes over N GPUs at B takes
// 2(N-1)/N * S/B plus 2(N-1) latencies, whether computed from its flows or by the closed form;
// a job inside one server opens no flow; the hierarchical all-reduce sends what a ring over the
// servers would; and a ring over a rack's servers, shared on the topology, runs at the NIC rate.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "fabric/collective.hpp"
#include "fabric/flow_sharing.hpp"
#include "tests/unit/must.hpp"

namespace troupe::fabric {
namespace {

using Flows = std::vector<std::pair<int32_t, int32_t>>;

std::vector<JobPart> Parts(const std::vector<int32_t>& servers, int32_t gpus_each) {
  std::vector<JobPart> parts;
  for (int32_t server : servers) parts.push_back({.server = server, .gpus = gpus_each});
  return parts;
}

TEST(FabricCollective, RingAllReduceTakesTheClosedForm) {
  const double bytes = 1e9, rate = 12.5e9, latency = 3e-6;
  for (int32_t n : {2, 3, 8, 64}) {
    std::vector<int32_t> servers;
    for (int32_t s = 0; s < n; ++s) servers.push_back(s);
    CollectiveTraffic traffic = AllReduceTraffic(Parts(servers, 1), bytes, Collective::kRing);
    double closed = 2.0 * (n - 1) / n * bytes / rate + 2.0 * (n - 1) * latency;
    EXPECT_DOUBLE_EQ(RingAllReduceSeconds(bytes, n, rate, latency), closed) << n;
    EXPECT_DOUBLE_EQ(AllReduceSeconds(traffic, rate, latency), closed) << n;
    EXPECT_EQ(traffic.flows.size(), static_cast<size_t>(n));
  }
}

TEST(FabricCollective, TheRingGoesServerToNextServerAndBack) {
  CollectiveTraffic traffic =
      AllReduceTraffic(Parts({5, 2, 9}, 4), 100, Collective::kHierarchicalRing);
  EXPECT_EQ(traffic.flows, (Flows{{5, 2}, {2, 9}, {9, 5}}));
  CollectiveTraffic two = AllReduceTraffic(Parts({0, 1}, 8), 100, Collective::kRing);
  EXPECT_EQ(two.flows, (Flows{{0, 1}, {1, 0}}));
}

TEST(FabricCollective, AJobInsideOneServerOpensNoFlow) {
  for (Collective collective : {Collective::kRing, Collective::kHierarchicalRing}) {
    CollectiveTraffic traffic = AllReduceTraffic(Parts({4}, 8), 1e9, collective);
    EXPECT_TRUE(traffic.flows.empty());
    EXPECT_EQ(AllReduceSeconds(traffic, 1e9, 1e-6), 0);
  }
  EXPECT_EQ(RingAllReduceSeconds(1e9, 1, 1e9, 1e-6), 0);
}

// 4 servers of 8 GPUs: the ring over 32 GPUs sends 2*31/32 S over each server boundary in 62
// steps; the hierarchical one sends 2*3/4 S in 6 (its steps inside a server are in the model's
// iteration time).
TEST(FabricCollective, HierarchicalSendsWhatARingOverTheServersWould) {
  const double bytes = 1e9;
  CollectiveTraffic ring = AllReduceTraffic(Parts({0, 1, 2, 3}, 8), bytes, Collective::kRing);
  CollectiveTraffic hier =
      AllReduceTraffic(Parts({0, 1, 2, 3}, 8), bytes, Collective::kHierarchicalRing);
  EXPECT_DOUBLE_EQ(ring.bytes_per_flow, 2.0 * 31 / 32 * bytes);
  EXPECT_EQ(ring.steps, 62);
  EXPECT_DOUBLE_EQ(hier.bytes_per_flow, 2.0 * 3 / 4 * bytes);
  EXPECT_EQ(hier.steps, 6);
  EXPECT_EQ(ring.flows, hier.flows);
  EXPECT_LT(hier.bytes_per_flow, ring.bytes_per_flow);
}

// A ring over the 4 servers of one rack: each flow leaves one server and enters the next, so no
// two share a link and each runs at the NIC's rate; the all-reduce takes the closed form with a
// step's latency of two NIC hops. A second job on the same servers halves every share.
TEST(FabricCollective, ARingOnTheTopologyRunsAtItsShare) {
  config::Fabric fabric;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "servers_per_rack: 4 server_nic_gbps: 100 nic_latency_us: 2", &fabric));
  Topology topology = Must(Topology::Build(fabric, 8));
  FlowSharing sharing(topology.Capacities());
  const double bytes = 4e8;
  CollectiveTraffic traffic = AllReduceTraffic(Parts({0, 1, 2, 3}, 1), bytes, Collective::kRing);
  std::vector<FlowId> ids;
  std::vector<int32_t> route;
  for (auto [from, to] : traffic.flows) {
    route.clear();
    topology.Route(from, to, &route);
    ids.push_back(sharing.Add(route));
  }
  sharing.Update();
  auto slowest = [&] {
    double rate = sharing.Rate(ids[0]);
    for (FlowId id : ids) rate = std::min(rate, sharing.Rate(id));
    return rate;
  };
  const double nic = 100e9 / 8;
  EXPECT_DOUBLE_EQ(slowest(), nic);
  EXPECT_DOUBLE_EQ(AllReduceSeconds(traffic, slowest(), topology.LatencyS(0, 1)),
                   RingAllReduceSeconds(bytes, 4, nic, 4e-6));
  for (auto [from, to] : traffic.flows) {
    route.clear();
    topology.Route(from, to, &route);
    sharing.Add(route);
  }
  sharing.Update();
  EXPECT_DOUBLE_EQ(slowest(), nic / 2);
}

}  // namespace
}  // namespace troupe::fabric
