// Topology (fabric/topology.hpp): routes and latencies inside a server, a rack, across racks and
// across spines; link capacities from Gbit/s and oversubscription (4:1 at the rack, the spine's
// from its racks'), overrides per rack and spine; and every fabric Build refuses, with
// InvalidInput naming the field.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fabric/topology.hpp"
#include "tests/unit/must.hpp"

namespace troupe::fabric {
namespace {

config::Fabric Parse(const std::string& text) {
  config::Fabric fabric;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &fabric)) << text;
  return fabric;
}

std::vector<std::string> RouteNames(const Topology& topology, int32_t from, int32_t to) {
  std::vector<int32_t> route;
  topology.Route(from, to, &route);
  std::vector<std::string> names;
  for (int32_t link : route) names.push_back(topology.LinkName(link));
  return names;
}

using Names = std::vector<std::string>;
constexpr double kUs = 1e-6;

// 8 servers, 2 a rack, 2 racks a spine: 4 racks under 2 spines under a core.
Topology ThreeLevel() {
  return Must(Topology::Build(Parse("servers_per_rack: 2 racks_per_spine: 2 nic_latency_us: 1 "
                                    "tor_latency_us: 10 spine_latency_us: 100"),
                              8));
}

TEST(FabricTopology, InsideAServerCrossesNothing) {
  Topology topology = ThreeLevel();
  EXPECT_TRUE(RouteNames(topology, 3, 3).empty());
  EXPECT_EQ(topology.LatencyS(3, 3), 0);
}

TEST(FabricTopology, InsideARackCrossesTwoNics) {
  Topology topology = ThreeLevel();
  EXPECT_EQ(RouteNames(topology, 0, 1), (Names{"server0.up", "server1.down"}));
  EXPECT_DOUBLE_EQ(topology.LatencyS(0, 1), 2 * kUs);
}

TEST(FabricTopology, AcrossRacksCrossesTheirUplinks) {
  Topology topology = ThreeLevel();
  EXPECT_EQ(RouteNames(topology, 1, 2),
            (Names{"server1.up", "rack0.up", "rack1.down", "server2.down"}));
  EXPECT_DOUBLE_EQ(topology.LatencyS(1, 2), 22 * kUs);
}

TEST(FabricTopology, AcrossSpinesCrossesTheCore) {
  Topology topology = ThreeLevel();
  EXPECT_EQ(topology.racks(), 4);
  EXPECT_EQ(topology.spines(), 2);
  EXPECT_EQ(RouteNames(topology, 7, 0), (Names{"server7.up", "rack3.up", "spine1.up", "spine0.down",
                                               "rack0.down", "server0.down"}));
  EXPECT_DOUBLE_EQ(topology.LatencyS(7, 0), 222 * kUs);
  EXPECT_EQ(topology.links(), 8u * 2 + 4 * 2 + 2 * 2);
}

TEST(FabricTopology, OneSpineHasNoCoreLinks) {
  Topology topology = Must(Topology::Build(Parse("servers_per_rack: 2"), 8));
  EXPECT_EQ(topology.spines(), 1);
  EXPECT_EQ(topology.links(), 8u * 2 + 4 * 2);
  EXPECT_EQ(RouteNames(topology, 0, 7),
            (Names{"server0.up", "rack0.up", "rack3.down", "server7.down"}));
}

TEST(FabricTopology, WithoutRacksEveryServerIsInOneRack) {
  Topology topology = Must(Topology::Build(Parse(""), 3));
  EXPECT_EQ(topology.racks(), 1);
  EXPECT_EQ(RouteNames(topology, 0, 2), (Names{"server0.up", "server2.down"}));
}

TEST(FabricTopology, RatesAreBytesPerSecondAndFourToOneQuartersTheRackUplink) {
  // 32 servers, 16 a rack at 100 Gbit/s: 1,600 Gbit/s of NICs under each rack; 4:1 leaves 400.
  // Two spines of one rack each at 2:1: 200 Gbit/s to the core.
  Topology topology = Must(Topology::Build(
      Parse("servers_per_rack: 16 racks_per_spine: 1 server_nic_gbps: 100 "
            "tor_oversubscription: 4 spine_oversubscription: 2 intra_server_gbps: 800"),
      32));
  std::vector<int32_t> route;
  topology.Route(0, 16, &route);
  ASSERT_EQ(route.size(), 6u);
  EXPECT_DOUBLE_EQ(topology.link(route[0]).capacity_bytes_per_s, 100e9 / 8);
  EXPECT_EQ(topology.link(route[1]).level, LinkLevel::kRackUp);
  EXPECT_DOUBLE_EQ(topology.link(route[1]).capacity_bytes_per_s, 400e9 / 8);
  EXPECT_EQ(topology.link(route[2]).level, LinkLevel::kSpineUp);
  EXPECT_DOUBLE_EQ(topology.link(route[2]).capacity_bytes_per_s, 200e9 / 8);
  EXPECT_EQ(topology.link(route[3]).level, LinkLevel::kSpineDown);
  EXPECT_DOUBLE_EQ(topology.intra_server_bytes_per_s(), 800e9 / 8);
  EXPECT_EQ(topology.Capacities().size(), topology.links());
}

TEST(FabricTopology, UplinksGivenDirectlyWin) {
  Topology topology = Must(Topology::Build(
      Parse(R"pb(
        rack { name: "a" first_server: 0 last_server: 1 spine: "left" uplink_gbps: 25 }
        rack { name: "b" first_server: 2 last_server: 3 spine: "right" }
        spine { name: "left" uplink_gbps: 10 }
        spine { name: "right" }
        tor_uplink_gbps: 50
        spine_uplink_gbps: 40
      )pb"),
      4));
  EXPECT_EQ(RouteNames(topology, 0, 3),
            (Names{"server0.up", "a.up", "left.up", "right.down", "b.down", "server3.down"}));
  std::vector<int32_t> route;
  topology.Route(0, 3, &route);
  EXPECT_DOUBLE_EQ(topology.link(route[1]).capacity_bytes_per_s, 25e9 / 8);
  EXPECT_DOUBLE_EQ(topology.link(route[2]).capacity_bytes_per_s, 10e9 / 8);
  EXPECT_DOUBLE_EQ(topology.link(route[3]).capacity_bytes_per_s, 40e9 / 8);
  EXPECT_DOUBLE_EQ(topology.link(route[4]).capacity_bytes_per_s, 50e9 / 8);
  EXPECT_EQ(topology.SpineOf(topology.RackOf(3)), 1);
}

// Build's refusal: InvalidInput, and the line starts with the field (then ": ").
void ExpectRefused(const std::string& text, int32_t servers, const std::string& field,
                   const std::string& says = "") {
  StatusOr<Topology> built = Topology::Build(Parse(text), servers);
  ASSERT_FALSE(built.ok()) << text;
  EXPECT_EQ(built.status().code(), Status::Code::kInvalidInput);
  EXPECT_EQ(built.status().message().rfind(field + ": ", 0), 0u) << built.status().message();
  EXPECT_NE(built.status().message().find(says), std::string::npos) << built.status().message();
}

TEST(FabricTopology, RefusesAServerInTwoRacks) {
  ExpectRefused(R"pb(rack { first_server: 0 last_server: 9 }
                     rack { first_server: 17 last_server: 19 }
                     rack { first_server: 10 last_server: 20 })pb",
                21, "fabric.rack[2].last_server", "server 17 is in rack 1 too");
}

TEST(FabricTopology, RefusesAServerNoRackHolds) {
  ExpectRefused("rack { first_server: 0 last_server: 9 }", 12, "fabric.rack",
                "server 10 is in no rack");
  ExpectRefused("rack { first_server: 0 last_server: 12 }", 12, "fabric.rack[0].last_server");
  ExpectRefused("rack { first_server: 0 }", 12, "fabric.rack[0].last_server", "missing");
}

TEST(FabricTopology, RefusesARackNamingAnUnknownSpine) {
  ExpectRefused(R"pb(rack { first_server: 0 last_server: 1 spine: "a" }
                     rack { first_server: 2 last_server: 3 spine: "x" }
                     spine { name: "a" })pb",
                4, "fabric.rack[1].spine", "'x'");
  ExpectRefused(R"pb(rack { first_server: 0 last_server: 3 spine: "a" })pb", 4,
                "fabric.rack[0].spine", "lists no spines");
}

TEST(FabricTopology, RefusesARackUnderNoSpineWhenSpinesAreGiven) {
  ExpectRefused(R"pb(rack { first_server: 0 last_server: 1 spine: "a" }
                     rack { first_server: 2 last_server: 3 }
                     spine { name: "a" })pb",
                4, "fabric.rack[1].spine", "under no spine");
}

TEST(FabricTopology, RefusesASpineNamedTwice) {
  ExpectRefused(R"pb(rack { first_server: 0 last_server: 3 spine: "a" }
                     spine { name: "a" }
                     spine { name: "a" })pb",
                4, "fabric.spine[1].name", "named twice");
}

TEST(FabricTopology, RefusesARackNamedTwice) {
  ExpectRefused(R"pb(rack { name: "a" first_server: 0 last_server: 1 }
                     rack { name: "a" first_server: 2 last_server: 3 })pb",
                4, "fabric.rack[1].name", "names rack 0 too");
}

TEST(FabricTopology, RefusesTwoWaysOfSayingOneThing) {
  ExpectRefused("servers_per_rack: 2 rack { first_server: 0 last_server: 3 }", 4,
                "fabric.servers_per_rack");
  ExpectRefused(R"pb(rack { first_server: 0 last_server: 3 spine: "a" }
                     spine { name: "a" }
                     racks_per_spine: 1)pb",
                4, "fabric.racks_per_spine");
}

TEST(FabricTopology, RefusesACapacityThatIsNotPositive) {
  ExpectRefused("server_nic_gbps: 0", 4, "fabric.server_nic_gbps", "must be > 0, got 0");
  ExpectRefused("tor_uplink_gbps: -1", 4, "fabric.tor_uplink_gbps", "got -1");
  ExpectRefused("rack { first_server: 0 last_server: 3 uplink_gbps: 0 }", 4,
                "fabric.rack[0].uplink_gbps");
  ExpectRefused("intra_server_gbps: 0", 4, "fabric.intra_server_gbps");
  ExpectRefused("nic_latency_us: -1", 4, "fabric.nic_latency_us", "must be >= 0");
  // A spine with no racks under it: its uplink from its racks' works out to 0.
  ExpectRefused(R"pb(rack { first_server: 0 last_server: 3 spine: "a" }
                     spine { name: "a" }
                     spine { name: "empty" })pb",
                4, "fabric.spine[1]", "works out to 0");
}

}  // namespace
}  // namespace troupe::fabric
