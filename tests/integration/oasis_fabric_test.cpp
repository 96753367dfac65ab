// An OASiS run across a fabric (actors/oasis/oasis_fabric.hpp, docs/oasis.md "With a fabric").
//
// Contract checked here: the link-domain actors deliver a transfer within one machine when the
// model says, whatever the links carry; two transfers that share an oversubscribed rack uplink
// take turns on it (the second arrives one transfer later, exactly), and side by side on a
// non-blocking one; transfers whose booking passes would push each other's starts back without end
// all arrive, within every link's capacity; an OASiS run with a fabric is deterministic; a generous
// fabric leaves the run the model's, a scarce one makes it no better than without and its jobs fall
// behind; a fabric that does not fit the run's worker servers + PS machines is refused in one line
// naming the field.
#include "actors/oasis/oasis_fabric.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "runner/oasis/oasis_run.hpp"
#include "runtime/actor_runtime.hpp"
#include "runtime/counted_send.hpp"
#include "tests/integration/oasis_fixture.hpp"

namespace troupe::testing {
namespace {

// `servers` servers in racks of 2, 10 Gbps NICs, no latency.
fabric::Topology RacksOfTwo(int32_t servers, double oversubscription) {
  config::Fabric f;
  f.set_servers_per_rack(2);
  f.set_server_nic_gbps(10);
  f.set_tor_oversubscription(oversubscription);
  f.set_nic_latency_us(0);
  f.set_tor_latency_us(0);
  f.set_spine_latency_us(0);
  StatusOr<fabric::Topology> t = fabric::Topology::Build(f, servers);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

fabric::Topology TwoRacks(double oversubscription) { return RacksOfTwo(4, oversubscription); }
fabric::Topology ThreeRacks() { return RacksOfTwo(6, 4); }  // 5 Gbps uplinks

struct Transfer {
  int32_t from, to;
  double gb, gbps;  // nominal: gb / gbps seconds after 0
};

struct BoundedArrivals {
  std::vector<double> at;  // when each reached its PS; -1 if it did not
  uint64_t messages = 0;   // sent in all
  bool quiet = false;      // the run ended with nothing left to do, not at the bound
};

// Sends each transfer's gradient at virtual time 0 into the fabric, and runs until nothing is
// left to do or more than `most` messages were sent (the transfers' passes may not end).
BoundedArrivals ArrivalsWithin(fabric::Topology topology, const std::vector<Transfer>& transfers,
                               uint64_t most) {
  ActorRuntime runtime{RuntimeOptions{}};
  auto fabric = std::make_shared<OasisFabric>(std::move(topology), 0, 0.0);
  SpawnOasisFabric(runtime.system(), fabric, runtime.clock(), runtime.telemetry());
  BoundedArrivals out;
  out.at.assign(transfers.size(), -1);
  caf::actor ps = runtime.system().spawn([&out](caf::event_based_actor*) -> caf::behavior {
    return {[&out](const OasisGradient& g) { out.at[static_cast<size_t>(g.chunk)] = g.at_s; }};
  });
  for (size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& x = transfers[i];
    OasisGradient g;
    g.chunk = static_cast<int64_t>(i);
    g.gb = x.gb;
    g.gbps = x.gbps;
    g.nominal_s = x.gb / x.gbps;
    g.ps = ps;
    g.route = {x.from, x.to, static_cast<int64_t>(i) * 2, 0, 0, 0};
    TellAnon(runtime.telemetry(), fabric->FirstDomain(x.from), std::move(g));
  }
  Telemetry* telemetry = runtime.telemetry();
  out.quiet = !runtime.Drive([telemetry, most] {
    if (telemetry->messages.load() > most) telemetry->done = true;
  });
  out.messages = telemetry->messages.load();
  for (const caf::actor& d : fabric->domains) caf::anon_send_exit(d, caf::exit_reason::kill);
  return out;
}

// Sends each transfer's gradient at virtual time 0 into the fabric; returns when each reached
// its PS (here a recorder), in the order sent.
std::vector<double> Arrivals(fabric::Topology topology, const std::vector<Transfer>& transfers) {
  const BoundedArrivals got =
      ArrivalsWithin(std::move(topology), transfers, std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(got.quiet);  // quiet once every transfer is in
  return got.at;
}

// Every transfer arrived, started no earlier than 0, and no link carried more than its capacity
// at any moment (each ran at its sender's rate or its route's smallest capacity).
void ExpectEveryArrivedWithinItsLinks(const fabric::Topology& topology,
                                      const std::vector<Transfer>& transfers,
                                      const BoundedArrivals& got) {
  constexpr double kBytesPerGb = 1e9 / 8;
  std::vector<std::vector<std::pair<double, double>>> steps(topology.links());
  for (size_t i = 0; i < transfers.size(); ++i) {
    if (got.at[i] < 0) {
      ADD_FAILURE() << "transfer " << i << " never arrived";
      continue;
    }
    std::vector<int32_t> route;
    topology.Route(transfers[i].from, transfers[i].to, &route);
    double rate = transfers[i].gbps * kBytesPerGb;
    for (int32_t l : route) rate = std::min(rate, topology.link(l).capacity_bytes_per_s);
    const double start = got.at[i] - transfers[i].gb * kBytesPerGb / rate;
    EXPECT_GE(start, -1e-9) << "transfer " << i << " arrived at " << got.at[i];
    for (int32_t l : route) {
      steps[static_cast<size_t>(l)].emplace_back(start, rate);
      steps[static_cast<size_t>(l)].emplace_back(got.at[i], -rate);
    }
  }
  for (size_t l = 0; l < steps.size(); ++l) {
    std::sort(steps[l].begin(), steps[l].end());
    double load = 0;
    for (const auto& [t, change] : steps[l]) {
      load += change;
      const double capacity = topology.link(static_cast<int32_t>(l)).capacity_bytes_per_s;
      EXPECT_LE(load, capacity * (1 + 1e-9)) << "link " << l << " over its capacity at " << t;
    }
  }
}

TEST(OasisFabricTest, ATransferWithinOneMachineCrossesNoLink) {
  // Server 0's NIC is full for 4 s (40 Gb at its 10 Gbps); a transfer from server 0 to itself
  // still arrives when the model says, and one to server 1 waits for the NIC.
  const std::vector<double> at =
      Arrivals(TwoRacks(1), {{0, 1, 40, 10}, {0, 0, 20, 10}, {0, 1, 10, 10}});
  EXPECT_EQ(at[0], 4.0);
  EXPECT_EQ(at[1], 2.0);
  EXPECT_EQ(at[2], 5.0);
}

TEST(OasisFabricTest, TwoTransfersSharingAnOversubscribedRackUplinkTakeTurns) {
  // 4:1: rack 0's uplink carries 2 x 10 / 4 = 5 Gbps. Each transfer is 5 Gb at 5 Gbps: 1 s.
  const std::vector<Transfer> two = {{0, 2, 5, 5}, {1, 3, 5, 5}};
  EXPECT_EQ(Arrivals(TwoRacks(4), {two[0]}), (std::vector<double>{1.0}));
  // Together the second waits for the first's 1 s on the uplink: 1 s + 1 s.
  EXPECT_EQ(Arrivals(TwoRacks(4), two), (std::vector<double>{1.0, 2.0}));
  // Non-blocking (20 Gbps uplink): side by side.
  EXPECT_EQ(Arrivals(TwoRacks(1), two), (std::vector<double>{1.0, 1.0}));
  // A sender faster than the uplink runs at the uplink's 5 Gbps: 10 Gb in 2 s, then 2 s more.
  EXPECT_EQ(Arrivals(TwoRacks(4), {{0, 2, 10, 10}, {1, 3, 10, 10}}),
            (std::vector<double>{2.0, 4.0}));
}

const std::vector<std::string> kScarce = {"fabric.servers_per_rack=4", "fabric.server_nic_gbps=10",
                                          "fabric.tor_oversubscription=4"};

TEST(OasisFabricTest, TransfersPushingEachOtherBackBookAloneAndAllArrive) {
  // Three transfers into server 1's NIC, handed to the domains at one moment: one from server 0
  // in its rack, two from rack 1 across its 5 Gbps uplink. Booked together, their passes pushed
  // each other's starts back without end (rack 0's and rack 1's domains each kept finding the
  // others' bookings where they had just been). After a few passes a transfer takes its domains'
  // locks and books alone; every one arrives, within every link's capacity.
  const std::vector<Transfer> together = {{0, 1, 3.7, 8.91}, {2, 1, 4.8, 1.75}, {3, 1, 3.95, 7.17}};
  constexpr uint64_t kMost = 100000;
  const BoundedArrivals got = ArrivalsWithin(ThreeRacks(), together, kMost);
  EXPECT_LE(got.messages, kMost);
  ExpectEveryArrivedWithinItsLinks(ThreeRacks(), together, got);
}

TEST(OasisFabricTest, ARunWithAFabricIsDeterministic) {
  const OasisRunOut a = RunOasis(kScarce);
  const OasisRunOut b = RunOasis(kScarce);
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  ASSERT_TRUE(b.status.ok()) << b.status.message();
  EXPECT_EQ(OasisJobsCsv(a.result.records.jobs), OasisJobsCsv(b.result.records.jobs));
  EXPECT_EQ(OasisSlotsCsv(a.result.records.slots), OasisSlotsCsv(b.result.records.slots));
  EXPECT_EQ(a.result.summary.messages(), b.result.summary.messages());
}

TEST(OasisFabricTest, AScarceFabricIsNoBetterThanNoneAndAGenerousOneIsTheModel) {
  const OasisRunOut none = RunOasis({});
  const OasisRunOut generous = RunOasis({"fabric.servers_per_rack=4"});  // 100 Gbps, 1:1
  const OasisRunOut scarce = RunOasis(kScarce);
  ASSERT_TRUE(none.status.ok()) << none.status.message();
  ASSERT_TRUE(generous.status.ok()) << generous.status.message();
  ASSERT_TRUE(scarce.status.ok()) << scarce.status.message();
  const auto& n = none.result.summary;
  const auto& g = generous.result.summary;
  const auto& s = scarce.result.summary;
  EXPECT_TRUE(g.violations().empty() && s.violations().empty());
  EXPECT_DOUBLE_EQ(g.total_utility(), n.total_utility());
  EXPECT_EQ(g.finished(), n.finished());
  EXPECT_EQ(g.behind(), 0);
  EXPECT_EQ(g.simulator_utility(), n.total_utility());  // with a fabric the simulator is beside
  EXPECT_LE(s.total_utility(), n.total_utility());
  EXPECT_LE(s.finished(), n.finished());
  EXPECT_GT(s.behind(), 0);
  EXPECT_GT(s.lost_utility(), 0);
}

TEST(OasisFabricTest, AFabricThatDoesNotFitTheMachinesIsRefusedInOneLine) {
  // 12 machines (6 + 6); one rack of 0..9 leaves 10 and 11 out.
  const OasisRunOut run = RunOasis({}, "fabric { rack { first_server: 0 last_server: 9 } }");
  ASSERT_FALSE(run.status.ok());
  const std::string message = run.status.message();
  EXPECT_EQ(message.rfind("oasis.textproto: fabric.", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  const OasisRunOut slowed = RunOasis({"fabric.servers_per_rack=4", "oasis.ps_link_slowdown=2"});
  ASSERT_FALSE(slowed.status.ok());
  EXPECT_EQ(slowed.status.message().rfind("oasis.textproto: oasis.ps_link_slowdown:", 0), 0u)
      << slowed.status.message();
}

}  // namespace
}  // namespace troupe::testing
