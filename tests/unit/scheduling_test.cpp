// ClusterLedger (scheduling/cluster_ledger.hpp), the scheduler's per-round view of what each
// server has free, and the randomised properties of placement (gpu_placement.hpp,
// proportional.hpp); the hand-made placement cases are in placement_test.cpp.
//
// ClusterLedger contract: the GPU-proportional share is capacity / GPUs per GPU (3 CPUs and
// 62.5 GB on Synergy's 8-GPU, 24-CPU, 500 GB servers); Fits() accepts exactly what is free in
// every resource, an exact sum of shares included; Take/Give move resources and the free-GPU
// buckets together; Reset frees everything. A seeded random Take/Give sequence keeps the buckets
// equal to a brute-force recount of every server's free GPUs.
//
// Placement properties, over random clusters (1-20 servers of 1-8 GPUs, varying CPUs and memory)
// and random queues of 1/2/4/8/16-GPU jobs: no server is overcommitted in any resource; each
// placement has exactly the job's GPUs on distinct servers; the ledger ends holding exactly the
// placements; a job is consolidated on the best-fit server whenever one had room; a spread job
// uses the fewest servers; and every skipped job really could not be placed at its point in the
// queue, checked by replaying the placements before it on a fresh ledger.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/gpu_placement.hpp"
#include "scheduling/proportional.hpp"

namespace troupe::scheduling {
namespace {

std::vector<ServerShape> Synergy(int servers) {
  return std::vector<ServerShape>(servers, ServerShape{8, 24, 500});
}

std::set<int32_t> Servers(const ServerSet& set) {
  return std::set<int32_t>(set.begin(), set.end());
}

// What the buckets should hold, recounted from every server's free GPUs.
void ExpectBucketsMatchRecount(const ClusterLedger& ledger) {
  int32_t free_sum = 0;
  for (int32_t k = 0; k <= ledger.max_server_gpus(); ++k) {
    std::set<int32_t> expected;
    for (int32_t s = 0; s < ledger.server_count(); ++s) {
      if (ledger.free(s).gpus == k) expected.insert(s);
    }
    ASSERT_EQ(Servers(ledger.ServersWithFreeGpus(k)), expected) << "bucket " << k;
  }
  for (int32_t s = 0; s < ledger.server_count(); ++s) free_sum += ledger.free(s).gpus;
  ASSERT_EQ(ledger.free_gpus(), free_sum);
}

TEST(ClusterLedgerTest, ProportionalShareIsThreeCpusAnd62_5GbPerGpu) {
  ClusterLedger ledger(Synergy(16));
  EXPECT_EQ(ledger.server_count(), 16);
  EXPECT_EQ(ledger.total_gpus(), 128);
  EXPECT_EQ(ledger.free_gpus(), 128);
  EXPECT_EQ(ledger.max_server_gpus(), 8);
  for (int32_t g = 1; g <= 8; ++g) {
    EXPECT_DOUBLE_EQ(ledger.ProportionalCpus(5, g), 3.0 * g);
    EXPECT_DOUBLE_EQ(ledger.ProportionalMemoryGb(5, g), 62.5 * g);
  }
}

TEST(ClusterLedgerTest, ProportionalShareFollowsEachServersShape) {
  ClusterLedger ledger({{8, 24, 500}, {4, 32, 256}, {2, 6, 100}});
  EXPECT_DOUBLE_EQ(ledger.ProportionalCpus(1, 1), 8);
  EXPECT_DOUBLE_EQ(ledger.ProportionalMemoryGb(1, 3), 192);
  EXPECT_DOUBLE_EQ(ledger.ProportionalCpus(2, 2), 6);
  EXPECT_DOUBLE_EQ(ledger.ProportionalMemoryGb(2, 1), 50);
  EXPECT_EQ(ledger.total_gpus(), 14);
  EXPECT_EQ(ledger.max_server_gpus(), 8);
  EXPECT_EQ(Servers(ledger.ServersWithFreeGpus(8)), (std::set<int32_t>{0}));
  EXPECT_EQ(Servers(ledger.ServersWithFreeGpus(4)), (std::set<int32_t>{1}));
  EXPECT_EQ(Servers(ledger.ServersWithFreeGpus(2)), (std::set<int32_t>{2}));
  EXPECT_TRUE(ledger.ServersWithFreeGpus(3).empty());
}

TEST(ClusterLedgerTest, FitsExactlyWhatIsFreeInEveryResource) {
  ClusterLedger ledger(Synergy(1));
  EXPECT_TRUE(ledger.Fits(0, 8, 24, 500));
  EXPECT_FALSE(ledger.Fits(0, 9, 0, 0));       // one GPU too many
  EXPECT_FALSE(ledger.Fits(0, 1, 24.01, 0));   // CPUs short
  EXPECT_FALSE(ledger.Fits(0, 1, 0, 500.01));  // memory short
  ledger.Take(0, 5, 20, 100);
  EXPECT_TRUE(ledger.Fits(0, 3, 4, 400));
  EXPECT_FALSE(ledger.Fits(0, 4, 0, 0));
  EXPECT_FALSE(ledger.Fits(0, 0, 4.5, 0));
  EXPECT_FALSE(ledger.Fits(0, 0, 0, 401));
}

TEST(ClusterLedgerTest, EightProportionalSharesFillAServerExactly) {
  // 62.5 GB and 3 CPUs taken eight times must leave an exact zero, not a rounding refusal.
  ClusterLedger ledger(Synergy(1));
  for (int i = 0; i < 8; ++i) {
    const double cpus = ledger.ProportionalCpus(0, 1);
    const double mem = ledger.ProportionalMemoryGb(0, 1);
    ASSERT_TRUE(ledger.Fits(0, 1, cpus, mem)) << "share " << i;
    ledger.Take(0, 1, cpus, mem);
  }
  EXPECT_EQ(ledger.free(0).gpus, 0);
  EXPECT_NEAR(ledger.free(0).cpus, 0, 1e-9);
  EXPECT_NEAR(ledger.free(0).memory_gb, 0, 1e-9);
  EXPECT_FALSE(ledger.Fits(0, 1, 0, 0));
  EXPECT_EQ(ledger.free_gpus(), 0);
}

TEST(ClusterLedgerTest, TakeAndGiveMoveResourcesAndBuckets) {
  ClusterLedger ledger(Synergy(3));
  ledger.Take(1, 3, 9, 187.5);
  EXPECT_EQ(ledger.free(1).gpus, 5);
  EXPECT_DOUBLE_EQ(ledger.free(1).cpus, 15);
  EXPECT_DOUBLE_EQ(ledger.free(1).memory_gb, 312.5);
  EXPECT_EQ(ledger.free_gpus(), 21);
  EXPECT_EQ(Servers(ledger.ServersWithFreeGpus(8)), (std::set<int32_t>{0, 2}));
  EXPECT_EQ(Servers(ledger.ServersWithFreeGpus(5)), (std::set<int32_t>{1}));
  ledger.Take(2, 8, 24, 500);
  EXPECT_EQ(Servers(ledger.ServersWithFreeGpus(0)), (std::set<int32_t>{2}));
  ledger.Give(1, 3, 9, 187.5);
  EXPECT_EQ(ledger.free(1).gpus, 8);
  EXPECT_DOUBLE_EQ(ledger.free(1).cpus, 24);
  EXPECT_EQ(Servers(ledger.ServersWithFreeGpus(8)), (std::set<int32_t>{0, 1}));
  EXPECT_TRUE(ledger.ServersWithFreeGpus(5).empty());
  EXPECT_EQ(ledger.free_gpus(), 16);
  // The shape never changes: only what is free does.
  EXPECT_EQ(ledger.shape(2).gpus, 8);
  EXPECT_DOUBLE_EQ(ledger.shape(2).memory_gb, 500);
}

TEST(ClusterLedgerTest, ResetRestoresEveryServerPlannedOnSinceTheLastReset) {
  ClusterLedger ledger(Synergy(4));
  for (int round = 0; round < 3; ++round) {
    ledger.Take(round, 0, 6, 100);  // CPUs and memory only: its GPU bucket stays
    ledger.Take(3, 2, 6, 125);
    ledger.Give(3, 1, 3, 62.5);
    ExpectBucketsMatchRecount(ledger);
    ledger.Reset();
    for (int32_t s = 0; s < 4; ++s) {
      EXPECT_EQ(ledger.free(s).gpus, 8);
      EXPECT_DOUBLE_EQ(ledger.free(s).cpus, 24) << "server " << s;
      EXPECT_DOUBLE_EQ(ledger.free(s).memory_gb, 500) << "server " << s;
    }
    EXPECT_EQ(Servers(ledger.ServersWithFreeGpus(8)), (std::set<int32_t>{0, 1, 2, 3}));
    ExpectBucketsMatchRecount(ledger);
  }
}

TEST(ClusterLedgerTest, ResetFreesEverything) {
  ClusterLedger ledger({{8, 24, 500}, {4, 16, 128}});
  ledger.Take(0, 8, 24, 500);
  ledger.Take(1, 1, 2, 3);
  ledger.Reset();
  EXPECT_EQ(ledger.free_gpus(), 12);
  EXPECT_EQ(ledger.free(0).gpus, 8);
  EXPECT_DOUBLE_EQ(ledger.free(1).cpus, 16);
  EXPECT_DOUBLE_EQ(ledger.free(1).memory_gb, 128);
  EXPECT_EQ(Servers(ledger.ServersWithFreeGpus(8)), (std::set<int32_t>{0}));
  EXPECT_EQ(Servers(ledger.ServersWithFreeGpus(4)), (std::set<int32_t>{1}));
  EXPECT_TRUE(ledger.ServersWithFreeGpus(0).empty());
  ExpectBucketsMatchRecount(ledger);
}

// Random Take/Give sequences on random clusters: after every step the buckets equal a recount,
// and no resource is negative or above capacity.
TEST(ClusterLedgerTest, BucketsStayConsistentUnderRandomTakeAndGive) {
  std::mt19937_64 rng(42);
  for (int cluster = 0; cluster < 50; ++cluster) {
    const int servers = std::uniform_int_distribution<int>(1, 20)(rng);
    std::vector<ServerShape> shapes;
    for (int s = 0; s < servers; ++s) {
      const int gpus = std::uniform_int_distribution<int>(1, 8)(rng);
      shapes.push_back({gpus, 4.0 * gpus, 100.0 * gpus});
    }
    ClusterLedger ledger(shapes);
    // What is held, per server, so Give only returns what Take took.
    std::vector<std::vector<int32_t>> held(servers);
    for (int step = 0; step < 400; ++step) {
      const int32_t s = std::uniform_int_distribution<int32_t>(0, servers - 1)(rng);
      const bool give = !held[s].empty() && std::bernoulli_distribution(0.45)(rng);
      if (give) {
        const int32_t g = held[s].back();
        held[s].pop_back();
        ledger.Give(s, g, 4.0 * g, 100.0 * g);
      } else {
        const int32_t g = std::uniform_int_distribution<int32_t>(1, shapes[s].gpus)(rng);
        if (!ledger.Fits(s, g, 4.0 * g, 100.0 * g)) continue;
        ledger.Take(s, g, 4.0 * g, 100.0 * g);
        held[s].push_back(g);
      }
      ExpectBucketsMatchRecount(ledger);
      const ServerShape& f = ledger.free(s);
      ASSERT_GE(f.gpus, 0);
      ASSERT_LE(f.gpus, shapes[s].gpus);
      ASSERT_NEAR(f.cpus, 4.0 * f.gpus, 1e-9);
      ASSERT_NEAR(f.memory_gb, 100.0 * f.gpus, 1e-9);
    }
  }
}

// ---- Placement properties ----

constexpr double kEps = 1e-6;

struct RandomCase {
  std::vector<ServerShape> shapes;
  std::vector<SchedJob> jobs;
};

RandomCase MakeCase(std::mt19937_64& rng) {
  RandomCase c;
  const int servers = std::uniform_int_distribution<int>(1, 20)(rng);
  for (int s = 0; s < servers; ++s) {
    const int gpus = std::uniform_int_distribution<int>(1, 8)(rng);
    const double cpus = std::uniform_int_distribution<int>(gpus, 6 * gpus)(rng);
    const double memory = std::uniform_real_distribution<double>(16, 128)(rng) * gpus;
    c.shapes.push_back({gpus, cpus, memory});
  }
  const int32_t sizes[] = {1, 2, 4, 8, 16};
  const int jobs = std::uniform_int_distribution<int>(1, 60)(rng);
  for (int i = 0; i < jobs; ++i) {
    SchedJob j;
    j.id = 1000 + i;
    j.arrival_s = i;
    j.gpus = sizes[std::uniform_int_distribution<int>(0, 4)(rng)];
    c.jobs.push_back(j);
  }
  return c;
}

AuxDemandFn ProportionalOf(const ClusterLedger& ledger) {
  return [&ledger](int32_t server, int32_t gpus) {
    return AuxDemand{ledger.ProportionalCpus(server, gpus),
                     ledger.ProportionalMemoryGb(server, gpus)};
  };
}

// Brute force: the best single server for the whole job (fewest free GPUs, then lowest index),
// or -1 when no server holds its GPUs, CPUs and memory.
int32_t BestSingleServer(const ClusterLedger& ledger, int32_t gpus, const AuxDemandFn& demand) {
  int32_t best = -1;
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    const AuxDemand aux = demand(s, gpus);
    if (!ledger.Fits(s, gpus, aux.cpus, aux.memory_gb)) continue;
    if (best == -1 || ledger.free(s).gpus < ledger.free(best).gpus) best = s;
  }
  return best;
}

// Brute force: the fewest servers whose free GPUs add up to `gpus` (GPUs alone decide under the
// proportional share, whose CPUs and memory come with every free GPU).
size_t FewestServers(const ClusterLedger& ledger, int32_t gpus) {
  std::vector<int32_t> free;
  for (int32_t s = 0; s < ledger.server_count(); ++s) free.push_back(ledger.free(s).gpus);
  std::sort(free.rbegin(), free.rend());
  size_t n = 0;
  for (int32_t sum = 0; sum < gpus && n < free.size(); ++n) sum += free[n];
  return n;
}

// Brute force: the most GPUs the cluster could still give one job, part by part.
int32_t MostPlaceable(const ClusterLedger& ledger, const AuxDemandFn& demand) {
  int32_t total = 0;
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    for (int32_t g = ledger.free(s).gpus; g > 0; --g) {
      const AuxDemand aux = demand(s, g);
      if (ledger.Fits(s, g, aux.cpus, aux.memory_gb)) {
        total += g;
        break;
      }
    }
  }
  return total;
}

// Every placement has the job's GPUs on distinct servers; no server is overcommitted; the ledger
// holds exactly what the placements lease.
void ExpectSoundPlacements(const RandomCase& c, const std::vector<JobPlacement>& placements,
                           const ClusterLedger& after) {
  std::vector<ServerShape> used(c.shapes.size(), ServerShape{0, 0, 0});
  int32_t total = 0;
  for (const JobPlacement& p : placements) {
    const auto job = std::find_if(c.jobs.begin(), c.jobs.end(),
                                  [&](const SchedJob& j) { return j.id == p.job_id; });
    ASSERT_NE(job, c.jobs.end());
    EXPECT_EQ(p.gpus(), job->gpus) << "job " << p.job_id;
    std::set<int32_t> servers;
    for (const PlacementPart& part : p.parts) {
      EXPECT_TRUE(servers.insert(part.server).second) << "job " << p.job_id << " twice on one";
      EXPECT_GE(part.gpus, 1);
      used[part.server].gpus += part.gpus;
      used[part.server].cpus += part.cpus;
      used[part.server].memory_gb += part.memory_gb;
    }
    total += p.gpus();
  }
  EXPECT_LE(total, after.total_gpus());
  for (size_t s = 0; s < c.shapes.size(); ++s) {
    EXPECT_LE(used[s].gpus, c.shapes[s].gpus) << "server " << s;
    EXPECT_LE(used[s].cpus, c.shapes[s].cpus + kEps) << "server " << s;
    EXPECT_LE(used[s].memory_gb, c.shapes[s].memory_gb + kEps) << "server " << s;
    const ServerShape& f = after.free(static_cast<int32_t>(s));
    EXPECT_EQ(f.gpus, c.shapes[s].gpus - used[s].gpus);
    EXPECT_NEAR(f.cpus, c.shapes[s].cpus - used[s].cpus, kEps);
    EXPECT_NEAR(f.memory_gb, c.shapes[s].memory_gb - used[s].memory_gb, kEps);
  }
}

// Replays the round job by job on a fresh ledger: each placed job went to the best single server
// when one had room (else, under the proportional share, to the fewest servers); each skipped
// job could not be placed at its point in the queue.
void ExpectEveryDecisionJustified(const RandomCase& c, const std::vector<JobPlacement>& placements,
                                  bool proportional,
                                  const std::function<AuxDemandFn(const ClusterLedger&)>& make) {
  ClusterLedger replay(c.shapes);
  const AuxDemandFn demand = make(replay);
  size_t next = 0;
  for (const SchedJob& job : c.jobs) {
    const bool placed = next < placements.size() && placements[next].job_id == job.id;
    if (!placed) {
      EXPECT_TRUE(PlaceGpus(replay, job.gpus, demand).empty()) << "job " << job.id;
      EXPECT_EQ(BestSingleServer(replay, job.gpus, demand), -1) << "job " << job.id;
      if (proportional) {
        EXPECT_LT(MostPlaceable(replay, demand), job.gpus) << "job " << job.id;
      }
      continue;
    }
    const PlacementParts& parts = placements[next++].parts;
    const int32_t best = BestSingleServer(replay, job.gpus, demand);
    if (best >= 0) {
      ASSERT_EQ(parts.size(), 1u) << "job " << job.id << " not consolidated";
      EXPECT_EQ(parts[0].server, best) << "job " << job.id << " not on the best fit";
    } else if (proportional) {
      EXPECT_EQ(parts.size(), FewestServers(replay, job.gpus)) << "job " << job.id;
    }
    for (const PlacementPart& p : parts) {
      const AuxDemand aux = demand(p.server, p.gpus);
      EXPECT_NEAR(p.cpus, aux.cpus, kEps);
      EXPECT_NEAR(p.memory_gb, aux.memory_gb, kEps);
      ASSERT_TRUE(replay.Fits(p.server, p.gpus, p.cpus, p.memory_gb)) << "job " << job.id;
      replay.Take(p.server, p.gpus, p.cpus, p.memory_gb);
    }
  }
  EXPECT_EQ(next, placements.size()) << "placements out of queue order";
}

TEST(PlacementPropertyTest, ProportionalRoundsOnRandomClusters) {
  std::mt19937_64 rng(20261129);
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const RandomCase c = MakeCase(rng);
    ClusterLedger ledger(c.shapes);
    std::vector<const SchedJob*> queue;
    for (const SchedJob& j : c.jobs) queue.push_back(&j);
    const std::vector<JobPlacement> placements = ProportionalMechanism().PlaceRound(queue, ledger);
    ExpectSoundPlacements(c, placements, ledger);
    ExpectEveryDecisionJustified(c, placements, true, ProportionalOf);
    if (HasFailure()) return;  // one broken round says enough
  }
}

// The same properties when CPUs and memory, not GPUs, are what runs out: a fixed demand per GPU
// that the random servers often cannot give in proportion. Placement is PlaceGpus in a
// skip-and-continue loop, as every mechanism uses it.
TEST(PlacementPropertyTest, FixedDemandRoundsOnRandomClusters) {
  std::mt19937_64 rng(7);
  const auto fixed = [](const ClusterLedger&) -> AuxDemandFn {
    return [](int32_t, int32_t g) { return AuxDemand{4.0 * g, 60.0 * g}; };
  };
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const RandomCase c = MakeCase(rng);
    ClusterLedger ledger(c.shapes);
    const AuxDemandFn demand = fixed(ledger);
    std::vector<JobPlacement> placements;
    for (const SchedJob& job : c.jobs) {
      PlacementParts parts = PlaceGpus(ledger, job.gpus, demand);
      for (const PlacementPart& p : parts) ledger.Take(p.server, p.gpus, p.cpus, p.memory_gb);
      if (!parts.empty()) placements.push_back({job.id, std::move(parts)});
    }
    ExpectSoundPlacements(c, placements, ledger);
    ExpectEveryDecisionJustified(c, placements, false, fixed);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace troupe::scheduling
