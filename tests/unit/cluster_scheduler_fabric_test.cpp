// The round engine with a fabric (scheduling/fabric_round.hpp): a job whose GPUs span servers
// runs each iteration its all-reduce's exposed time longer, at its max-min share of the links;
// jobs sharing a link slow each other and the records say by how much; a job inside one server
// crosses nothing; standing leases end when a job's share of the network changes; and the same
// events give the same records.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "config/config.pb.h"
#include "tests/unit/cluster_scheduler_harness.hpp"
#include "tests/unit/tree_fabric.hpp"

namespace troupe::scheduling {
namespace {

using testing::EmulatedCluster;
using testing::EndedRecord;
using testing::Fifo;
using testing::Servers;

constexpr double kGradientBytes = 1e8;       // 100 MB a iteration
constexpr double kNicBytesPerS = 100e9 / 8;  // 100 Gb/s
constexpr double kHopLatencyS = 2e-6;        // server to server in one rack: NIC up, NIC down
constexpr JobTraffic kTraffic{kGradientBytes, 0};

// `servers` servers in racks of `per_rack` under one spine, 100 Gb/s NICs, racks at 4:1.
ClusterSchedulerOptions WithFabric(int32_t servers, int32_t per_rack, bool standing = false) {
  ClusterSchedulerOptions options = Fifo();
  options.fabric = troupe::testing::TreeFabric(servers, per_rack, 100, 4);
  options.standing_leases = standing;
  return options;
}

// The grants of `job_id` in the round the output holds.
std::vector<Grant> GrantsOf(const testing::RecordingOutput& out, int64_t job_id) {
  std::vector<Grant> grants;
  for (const auto& [server, round] : out.leases) {
    for (const Grant& g : round.grants) {
      if (g.job_id == job_id) grants.push_back(g);
    }
  }
  return grants;
}

const JobNetworkRecord* NetworkOf(const testing::RecordingOutput& out, int64_t job_id) {
  for (const JobNetworkRecord& r : out.job_network.jobs) {
    if (r.job_id == job_id) return &r;
  }
  return nullptr;
}

TEST(ClusterSchedulerFabric, AJobOverTwoServersRunsItsRingAllReduceEachIteration) {
  EmulatedCluster cluster(WithFabric(2, 2), Servers(2, 8));
  cluster.Submit(0, 16, 600, 0, /*iter_time_s=*/1, kTraffic);
  cluster.StartAt(0);
  const std::vector<Grant> grants = GrantsOf(cluster.out, 0);
  ASSERT_EQ(grants.size(), 2u);
  // Hierarchical ring over k = 2 servers: each flow carries 2(k-1)/k * S = S bytes at the NIC's
  // rate, in 2(k-1) = 2 steps of one hop's latency.
  const double expected = kGradientBytes / kNicBytesPerS + 2 * kHopLatencyS;
  for (const Grant& g : grants) EXPECT_NEAR(g.network_s, expected, 1e-12);
  cluster.CloseRound();
  cluster.Run();
  // floor(300 / (1 + 0.008004)) = 297 iterations a round instead of 300: 600 take three rounds.
  const JobRecord* record = EndedRecord(cluster.out, 0);
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->end_s, 900);
  const JobNetworkRecord* network = NetworkOf(cluster.out, 0);
  ASSERT_NE(network, nullptr);
  EXPECT_NEAR(network->comm_s, 600 * expected, 1e-9);
  EXPECT_NEAR(network->contention_s, 0, 1e-12);  // alone on the fabric
}

TEST(ClusterSchedulerFabric, OverlapHidesNoMoreThanTheComputeLastsSoNoLinkIsOverfull) {
  EmulatedCluster cluster(WithFabric(2, 2), Servers(2, 8));
  const double compute_s = 0.001;  // far shorter than the exchange
  cluster.Submit(0, 16, 1000000, 0, compute_s, JobTraffic{kGradientBytes, 0.9});
  cluster.StartAt(0);
  const double comm = kGradientBytes / kNicBytesPerS + 2 * kHopLatencyS;
  for (const Grant& g : GrantsOf(cluster.out, 0)) {
    EXPECT_NEAR(g.network_s, comm - compute_s, 1e-12) << "not (1 - 0.9) x comm";
  }
  cluster.CloseRound();
  ASSERT_EQ(cluster.out.link_logs.size(), 1u);
  for (const LinkRecord& link : cluster.out.link_logs[0].links) {
    EXPECT_LE(link.bytes, kNicBytesPerS * 300) << "link " << link.link;
    EXPECT_GT(link.bytes, 0.99 * kNicBytesPerS * 300) << "the exchange keeps it busy";
  }
}

TEST(ClusterSchedulerFabric, AJobInsideOneServerCrossesNoLink) {
  EmulatedCluster cluster(WithFabric(2, 2), Servers(2, 8));
  cluster.Submit(0, 8, 600, 0, 1, kTraffic);
  cluster.Run();
  const JobRecord* record = EndedRecord(cluster.out, 0);
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->end_s, 600);  // 300 iterations a round, as without a fabric
  EXPECT_TRUE(cluster.out.link_logs.empty());
  EXPECT_EQ(NetworkOf(cluster.out, 0), nullptr);
}

TEST(ClusterSchedulerFabric, JobsSharingAServersNicSlowEachOtherAndTheRecordsSaySo) {
  // Two 12-GPU jobs on three 8-GPU servers: however they are placed, a server holds GPUs of both,
  // and its NIC carries a flow of each in each direction.
  EmulatedCluster cluster(WithFabric(3, 3), Servers(3, 8));
  cluster.Submit(0, 12, 100000, 0, 1, kTraffic);
  cluster.Submit(1, 12, 100000, 0, 1, kTraffic);
  cluster.StartAt(0);
  const double solo = kGradientBytes / kNicBytesPerS + 2 * kHopLatencyS;
  const double shared = kGradientBytes / (kNicBytesPerS / 2) + 2 * kHopLatencyS;
  for (int64_t job : {0, 1}) {
    for (const Grant& g : GrantsOf(cluster.out, job)) EXPECT_NEAR(g.network_s, shared, 1e-12);
  }
  cluster.CloseRound();
  ASSERT_EQ(cluster.out.link_logs.size(), 1u);
  int32_t most_flows = 0;
  for (const LinkRecord& link : cluster.out.link_logs[0].links) {
    most_flows = std::max(most_flows, link.flows);
    EXPECT_GT(link.bytes, 0);
    EXPECT_EQ(link.round, 0);
  }
  EXPECT_EQ(most_flows, 2);
  cluster.engine().EndRun("test");
  for (int64_t job : {0, 1}) {
    const JobNetworkRecord* network = NetworkOf(cluster.out, job);
    ASSERT_NE(network, nullptr);
    const double iterations = std::floor(300 / (1 + shared));
    EXPECT_NEAR(network->comm_s, iterations * shared, 1e-9);
    EXPECT_NEAR(network->contention_s, iterations * (shared - solo), 1e-9);
  }
}

TEST(ClusterSchedulerFabric, AStandingLeaseIsGrantedAnewWhenItsShareOfTheNetworkChanges) {
  EmulatedCluster cluster(WithFabric(3, 3, /*standing=*/true), Servers(3, 8));
  cluster.Submit(0, 12, 100000, 0, 1, kTraffic);
  cluster.Submit(1, 12, 100000, 500, 1, kTraffic);  // placed from the round at 600
  cluster.StartAt(0);
  const std::vector<Grant> first = GrantsOf(cluster.out, 0);
  ASSERT_FALSE(first.empty());
  cluster.CloseRound();
  cluster.StartAt(300);
  EXPECT_TRUE(GrantsOf(cluster.out, 0).empty()) << "alone, its lease stands";
  cluster.CloseRound();
  cluster.StartAt(600);
  const std::vector<Grant> shared = GrantsOf(cluster.out, 0);
  ASSERT_FALSE(shared.empty()) << "a job joined its links: granted anew";
  EXPECT_GT(shared[0].network_s, first[0].network_s);
  EXPECT_EQ(shared[0].rounds_stood, 1);
}

// Rack `rack`'s uplink and downlink in the model's topology.
std::vector<int32_t> UplinksOf(const FabricModel& model, int32_t rack) {
  std::vector<int32_t> links;
  for (size_t l = 0; l < model.topology.links(); ++l) {
    const fabric::Link& link = model.topology.link(static_cast<int32_t>(l));
    const bool uplink =
        link.level == fabric::LinkLevel::kRackUp || link.level == fabric::LinkLevel::kRackDown;
    if (uplink && link.owner == rack) links.push_back(static_cast<int32_t>(l));
  }
  return links;
}

TEST(ClusterSchedulerFabric, ASlowUplinkSlowsTheAllReduceCrossingItForItsEpisodeOnly) {
  // Two 8-GPU servers in racks of one: the 16-GPU job's two flows cross both racks' uplinks,
  // each a quarter of a NIC (4:1). Rack 0's uplink runs at 0.25 of it over [300, 600).
  ClusterSchedulerOptions options = WithFabric(2, 1);
  auto model = std::make_shared<FabricModel>(*options.fabric);
  const std::vector<int32_t> uplinks = UplinksOf(*model, 0);
  ASSERT_EQ(uplinks.size(), 2u);
  const double factor = 0.25;
  std::vector<fabric::LinkSlowdown> stretches;
  for (int32_t link : uplinks) stretches.push_back({link, 300, 600, factor});
  model->slowdowns = fabric::LinkSlowdowns(std::move(stretches));
  options.fabric = model;
  EmulatedCluster cluster(options, Servers(2, 8));
  cluster.Submit(0, 16, 1000000, 0, /*iter_time_s=*/1, kTraffic);
  const double uplink = kNicBytesPerS / 4;
  const double latency = 2 * 4e-6;  // two steps of NIC, uplink, downlink, NIC: 1 us each
  const double normal = kGradientBytes / uplink + latency;
  const double slowed = kGradientBytes / (factor * uplink) + latency;
  const double expected[] = {normal, slowed, normal};
  for (int round = 0; round < 3; ++round) {
    cluster.StartAt(300.0 * round);
    for (const Grant& g : GrantsOf(cluster.out, 0)) {
      EXPECT_NEAR(g.network_s, expected[round], 1e-9) << "round " << round;
    }
    cluster.CloseRound();
    ASSERT_EQ(cluster.out.link_logs.size(), static_cast<size_t>(round + 1));
    for (const LinkRecord& link : cluster.out.link_logs.back().links) {
      if (link.link != uplinks[0]) continue;
      EXPECT_DOUBLE_EQ(link.rate_bytes_per_s, round == 1 ? factor * uplink : uplink);
    }
  }
  cluster.engine().EndRun("test");
  // The closed form: the slowed round's iterations each take S / U x (1 / f - 1) longer to
  // communicate; alone on the fabric as it is, the job meets no contention.
  const JobNetworkRecord* network = NetworkOf(cluster.out, 0);
  ASSERT_NE(network, nullptr);
  const double n_normal = std::floor(300 / (1 + normal)), n_slowed = std::floor(300 / (1 + slowed));
  EXPECT_NEAR(network->comm_s, 2 * n_normal * normal + n_slowed * slowed, 1e-6);
  EXPECT_NEAR(slowed - normal, kGradientBytes / uplink * (1 / factor - 1), 1e-12);
  EXPECT_NEAR(network->contention_s, 0, 1e-9);
}

// A random mix of jobs, some spanning servers, on a fabric of two racks.
std::vector<std::string> RunMix(uint64_t seed) {
  EmulatedCluster cluster(WithFabric(8, 4), Servers(8, 8));
  std::mt19937_64 rng(seed);
  const int32_t sizes[] = {1, 4, 8, 12, 16, 24};
  for (int64_t id = 0; id < 40; ++id) {
    const double gradient = 1e7 * static_cast<double>(1 + rng() % 50);
    cluster.Submit(id, sizes[rng() % 6], 200 + static_cast<int64_t>(rng() % 3000),
                   static_cast<double>(rng() % 5000), 0.5 + static_cast<double>(rng() % 10) / 10,
                   JobTraffic{gradient, static_cast<double>(rng() % 3) / 4});
  }
  cluster.Run();
  std::vector<std::string> lines = cluster.out.log;
  for (const LinkBatch& batch : cluster.out.link_logs) {
    for (const LinkRecord& l : batch.links) {
      lines.push_back(std::to_string(l.round) + " " + std::to_string(l.link) + " " +
                      std::to_string(l.bytes) + " " + std::to_string(l.flows));
    }
  }
  for (const JobNetworkRecord& j : cluster.out.job_network.jobs) {
    lines.push_back(std::to_string(j.job_id) + " " + std::to_string(j.comm_s) + " " +
                    std::to_string(j.contention_s));
  }
  return lines;
}

TEST(ClusterSchedulerFabric, TheSameEventsGiveTheSameRecords) {
  const std::vector<std::string> a = RunMix(11);
  EXPECT_EQ(a, RunMix(11));
  EXPECT_NE(a, RunMix(12));
  EXPECT_TRUE(
      std::any_of(a.begin(), a.end(), [](const std::string& l) { return l.rfind("end", 0) == 0; }));
}

}  // namespace
}  // namespace troupe::scheduling
