// Synergy's GREEDY and TUNE mechanisms (scheduling/greedy.hpp, tune.hpp) and their demands
// (scheduling/demand.hpp): hand-made cases for each rule, then randomised properties.
//
// Contract checked here: ideal demands are the job's per-GPU ideal capped at the server, the
// proportional share where the job has none or where its matrix says the ideal buys less.
// GREEDY places at the ideal in policy order, consolidating a job whose GPUs fit one server, and
// skips a job that does not fit (a later one is still placed). TUNE places the jobs the
// proportional mechanism places, largest first; a job that does not fit at its ideal falls back
// to the share, else co-resident parts above their share are reverted, just enough of them; a
// job whose ideal is below the share keeps it; all-proportional demands reproduce the
// proportional mechanism. Over 400 random rounds each (1-20 Synergy servers plus a few other
// shapes, or 70 distinct shapes; the catalogue's models and random monotone matrices with random
// ideals; 1/2/4/8/16-GPU jobs): no server is overcommitted, the ledger holds exactly the
// placements, TUNE places the proportional mechanism's jobs at no less than their
// proportional-share throughput, and every job GREEDY skipped really did not fit.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "scheduling/demand.hpp"
#include "scheduling/greedy.hpp"
#include "scheduling/mechanism_registry.hpp"
#include "scheduling/proportional.hpp"
#include "scheduling/tune.hpp"
#include "tests/support/random_sensitivity.hpp"
#include "workload/model_catalog.hpp"

namespace troupe::scheduling {
namespace {

constexpr double kEps = 1e-6;
const ServerShape kSynergy{8, 24, 500};

SchedJob Job(int64_t id, int32_t gpus, double cpus_per_gpu, double memory_per_gpu) {
  SchedJob j;
  j.id = id;
  j.arrival_s = static_cast<double>(id);
  j.gpus = gpus;
  j.ideal_cpus_per_gpu = cpus_per_gpu;
  j.ideal_memory_gb_per_gpu = memory_per_gpu;
  return j;
}

// A job of a catalogue model, with its ideal and its (true) sensitivity matrix.
SchedJob Model(int64_t id, int32_t gpus, const ModelProfile& m) {
  SchedJob j = Job(id, gpus, m.ideal_cpus_per_gpu, m.ideal_memory_gb_per_gpu);
  j.speedup_at_ideal = m.speedup_at_ideal;
  j.sensitivity = std::make_shared<const SensitivityMatrix>(m.sensitivity);
  return j;
}
SchedJob Model(int64_t id, int32_t gpus, const char* name) {
  return Model(id, gpus, *ModelCatalog::BuiltIn().Find(name));
}

// A job with a random ideal (possibly below the share) and a random monotone matrix.
SchedJob RandomSensitive(int64_t id, int32_t gpus, std::mt19937_64& rng) {
  SensitivityMatrix w = testing::RandomMonotoneMatrix(rng);
  const double memory[] = {20, 40, 62.5, 125, 187.5};
  SchedJob j = Job(id, gpus, 1 + static_cast<double>(rng() % 12), memory[rng() % 5]);
  j.sensitivity = std::make_shared<const SensitivityMatrix>(std::move(w));
  return j;
}

std::vector<const SchedJob*> Queue(const std::vector<SchedJob>& jobs) {
  std::vector<const SchedJob*> q;
  for (const SchedJob& j : jobs) q.push_back(&j);
  return q;
}

const JobPlacement* Find(const std::vector<JobPlacement>& ps, int64_t id) {
  for (const JobPlacement& p : ps) {
    if (p.job_id == id) return &p;
  }
  return nullptr;
}

// (server, gpus, cpus, memory) of one consolidated placement.
void ExpectPart(const JobPlacement* p, int32_t server, int32_t gpus, double cpus, double memory) {
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->parts.size(), 1u) << "job " << p->job_id;
  EXPECT_EQ(p->parts[0].server, server) << "job " << p->job_id;
  EXPECT_EQ(p->parts[0].gpus, gpus) << "job " << p->job_id;
  EXPECT_NEAR(p->parts[0].cpus, cpus, kEps) << "job " << p->job_id;
  EXPECT_NEAR(p->parts[0].memory_gb, memory, kEps) << "job " << p->job_id;
}

// The same jobs on the same servers with the same GPUs, CPUs and memory, in the same order.
void ExpectSamePlacements(const std::vector<JobPlacement>& a, const std::vector<JobPlacement>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].job_id, b[i].job_id);
    ASSERT_EQ(a[i].parts.size(), b[i].parts.size()) << "job " << a[i].job_id;
    for (size_t k = 0; k < a[i].parts.size(); ++k) {
      ASSERT_EQ(a[i].parts[k].server, b[i].parts[k].server) << "job " << a[i].job_id;
      ASSERT_EQ(a[i].parts[k].gpus, b[i].parts[k].gpus);
      ASSERT_NEAR(a[i].parts[k].cpus, b[i].parts[k].cpus, kEps);
      ASSERT_NEAR(a[i].parts[k].memory_gb, b[i].parts[k].memory_gb, kEps);
    }
  }
}

TEST(DemandTest, IdealIsCappedAtTheServerAndGuardedByTheMatrix) {
  ClusterLedger ledger({kSynergy});
  const SchedJob alexnet = Model(1, 1, "alexnet");
  EXPECT_NEAR(IdealDemand(alexnet, ledger, 0, 1).cpus, 12, kEps);
  EXPECT_NEAR(IdealDemand(alexnet, ledger, 0, 1).memory_gb, 125, kEps);
  EXPECT_NEAR(IdealDemand(alexnet, ledger, 0, 4).cpus, 24, kEps);  // 48 capped at the server
  EXPECT_NEAR(IdealDemand(alexnet, ledger, 0, 4).memory_gb, 500, kEps);
  const SchedJob gnmt = Model(2, 2, "gnmt");  // below the share: kept
  EXPECT_NEAR(IdealDemand(gnmt, ledger, 0, 2).cpus, 2, kEps);
  EXPECT_NEAR(FallbackDemand(gnmt, ledger, 0, 2).memory_gb, 40, kEps);
  EXPECT_NEAR(FallbackDemand(alexnet, ledger, 0, 2).cpus, 6, kEps);  // above: the share
  const SchedJob plain = Job(3, 2, 0, 0);                            // no ideal: the share
  EXPECT_NEAR(IdealDemand(plain, ledger, 0, 2).cpus, 6, kEps);
  EXPECT_NEAR(IdealDemand(plain, ledger, 0, 2).memory_gb, 125, kEps);
  // A CPU-hungry job whose ideal (4 CPUs per GPU) buys less than the share of a CPU-rich server
  // (8 CPUs per GPU) gets that share there, and its ideal on a Synergy server.
  SchedJob hungry = Job(4, 1, 4, 62.5);
  hungry.sensitivity = std::make_shared<const SensitivityMatrix>(
      SensitivityMatrix{{1, 9}, {10, 100}, {0.5, 0.5, 1.5, 1.5}});
  ClusterLedger rich({{4, 32, 256}});
  EXPECT_NEAR(IdealDemand(hungry, rich, 0, 1).cpus, 8, kEps);
  EXPECT_NEAR(IdealDemand(hungry, rich, 0, 1).memory_gb, 64, kEps);
  EXPECT_NEAR(IdealDemand(hungry, ledger, 0, 1).cpus, 4, kEps);
  EXPECT_NEAR(PartThroughput(hungry, {0, 2, 8, 100}), 0.875, kEps);
  EXPECT_NEAR(PlacementThroughput(hungry, {4, {{0, 1, 4, 62.5}, {1, 1, 1, 62.5}}}), 0.5, kEps);
}

TEST(GreedyMechanismTest, SkipsAJobWhoseCpusDoNotFitAndPlacesALaterOne) {
  ClusterLedger ledger({kSynergy, kSynergy});
  const std::vector<SchedJob> jobs = {Job(1, 1, 12, 125), Job(2, 4, 4, 62.5), Job(3, 2, 9, 62.5),
                                      Job(4, 1, 1, 20)};
  GreedyMechanism greedy;
  const std::vector<JobPlacement> ps = greedy.PlaceRound(Queue(jobs), ledger);
  ASSERT_EQ(ps.size(), 3u);
  ExpectPart(Find(ps, 1), 0, 1, 12, 125);
  ExpectPart(Find(ps, 2), 1, 4, 16, 250);  // server 0 lacks 16 CPUs
  EXPECT_EQ(Find(ps, 3), nullptr);         // 18 CPUs: 12 and 8 free
  ExpectPart(Find(ps, 4), 1, 1, 1, 20);    // best fit: server 1 has fewer GPUs free
  EXPECT_EQ(ledger.free_gpus(), 10);       // GPUs idle: the strawman's fragmentation
  EXPECT_NEAR(ledger.free(1).cpus, 7, kEps);
  EXPECT_NEAR(ledger.free(0).memory_gb, 375, kEps);
}

TEST(GreedyMechanismTest, ConsolidatesWhenTheGpusFitOneServerRatherThanSpread) {
  // Two 4-GPU jobs at 20 CPUs leave 4 GPUs and 4 CPUs on each server. A 2-GPU job at 6 CPUs
  // would fit as 1 + 1 GPUs, but its GPUs fit one server, so GREEDY skips it; TUNE places it.
  ClusterLedger ledger({kSynergy, kSynergy});
  const std::vector<SchedJob> jobs = {Job(1, 4, 5, 62.5), Job(2, 4, 5, 62.5), Job(3, 2, 3, 62.5)};
  const std::vector<JobPlacement> ps = GreedyMechanism().PlaceRound(Queue(jobs), ledger);
  ASSERT_EQ(ps.size(), 2u);
  ExpectPart(Find(ps, 1), 0, 4, 20, 250);
  ExpectPart(Find(ps, 2), 1, 4, 20, 250);
  ledger.Reset();
  const std::vector<JobPlacement> tuned =
      TuneMechanism(/*sort_by_demand=*/true).PlaceRound(Queue(jobs), ledger);
  ASSERT_EQ(tuned.size(), 3u);
  ExpectPart(Find(tuned, 1), 0, 4, 12, 250);  // reverted to make room on server 0
  ExpectPart(Find(tuned, 2), 1, 4, 20, 250);
  ExpectPart(Find(tuned, 3), 0, 2, 6, 125);
}

TEST(TuneMechanismTest, AJobAboveItsShareFallsBackToItElsewhereBeforeRevertingOthers) {
  // A's capped ideal takes server 0's CPUs and memory with 4 GPUs; B (16 CPUs) takes server 1.
  // C's 9 CPUs fit nowhere, but its 6-CPU share fits server 1: it falls back there rather than
  // reverting A on server 0, the best fit by GPUs. The policy's order is C, B, A; TUNE places
  // the most GPUs, then the most CPUs, first.
  ClusterLedger ledger({kSynergy, kSynergy});
  const std::vector<SchedJob> jobs = {Job(3, 2, 4.5, 62.5), Job(2, 2, 8, 62.5), Job(1, 4, 12, 125)};
  TuneMechanism tune(/*sort_by_demand=*/true);
  const std::vector<JobPlacement> ps = tune.PlaceRound(Queue(jobs), ledger);
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[0].job_id, 1);
  EXPECT_EQ(ps[1].job_id, 2);
  ExpectPart(Find(ps, 1), 0, 4, 24, 500);
  ExpectPart(Find(ps, 2), 1, 2, 16, 125);
  ExpectPart(Find(ps, 3), 1, 2, 6, 125);
  EXPECT_NEAR(ledger.free(1).cpus, 2, kEps);
}

TEST(TuneMechanismTest, RevertsJustEnoughCoResidentsMostCpusPerGpuFirst) {
  // A (11 CPUs) and B (10) leave 3 free; X wants its 6-CPU share. Reverting A frees 5: enough.
  ClusterLedger ledger({kSynergy});
  const std::vector<SchedJob> jobs = {Job(1, 2, 5.5, 62.5), Job(2, 2, 5, 62.5), Job(3, 2, 3, 62.5)};
  const std::vector<JobPlacement> ps =
      TuneMechanism(/*sort_by_demand=*/true).PlaceRound(Queue(jobs), ledger);
  ASSERT_EQ(ps.size(), 3u);
  ExpectPart(Find(ps, 1), 0, 2, 6, 125);
  ExpectPart(Find(ps, 2), 0, 2, 10, 125);
  ExpectPart(Find(ps, 3), 0, 2, 6, 125);
  EXPECT_NEAR(ledger.free(0).cpus, 2, kEps);
  EXPECT_NEAR(ledger.free(0).memory_gb, 125, kEps);
}

TEST(TuneMechanismTest, ABelowShareJobKeepsItsSmallDemand) {
  // alexnet's 4 GPUs take the whole server (capped ideal); gnmt's 4 GPUs need 4 CPUs and 80 GB,
  // so alexnet's CPUs revert to its share and gnmt keeps its small demand, not the share.
  ClusterLedger ledger({kSynergy});
  const std::vector<SchedJob> jobs = {Model(1, 4, "gnmt"), Model(2, 4, "alexnet")};
  const std::vector<JobPlacement> ps =
      TuneMechanism(/*sort_by_demand=*/true).PlaceRound(Queue(jobs), ledger);
  ASSERT_EQ(ps.size(), 2u);
  ExpectPart(Find(ps, 2), 0, 4, 12, 250);
  ExpectPart(Find(ps, 1), 0, 4, 4, 80);
  EXPECT_NEAR(ledger.free(0).cpus, 8, kEps);
  EXPECT_NEAR(ledger.free(0).memory_gb, 170, kEps);
  EXPECT_NEAR(PlacementThroughput(jobs[1], *Find(ps, 2)), 1, kEps);
  EXPECT_NEAR(PlacementThroughput(jobs[0], *Find(ps, 1)), 1, kEps);
}

TEST(TuneMechanismTest, AJobNoServerHoldsIsSpreadOverTheFewestServers) {
  // 12 GPUs of alexnet over two 8-GPU servers: 8 + 4, the ideal on both (capped at each server).
  ClusterLedger ledger({kSynergy, kSynergy});
  const std::vector<SchedJob> jobs = {Model(1, 12, "alexnet"), Model(2, 4, "res50")};
  const std::vector<JobPlacement> ps =
      TuneMechanism(/*sort_by_demand=*/true).PlaceRound(Queue(jobs), ledger);
  ASSERT_EQ(ps.size(), 2u);
  const JobPlacement* big = Find(ps, 1);
  ASSERT_EQ(big->parts.size(), 2u);
  EXPECT_EQ(big->gpus(), 12);
  // res50 (4 GPUs, 16 CPUs) found server 1's remaining 4 GPUs CPU-less at alexnet's capped
  // ideal, so alexnet's part there reverted to its share.
  ExpectPart(Find(ps, 2), big->parts[1].server, 4, 12, 250);
  EXPECT_NEAR(big->parts[1].cpus, 12, kEps);
  EXPECT_GE(PlacementThroughput(jobs[0], *big), 1 - 1e-9);
}

TEST(TuneMechanismTest, AllProportionalDemandsReproduceTheProportionalMechanism) {
  ClusterLedger a({kSynergy, kSynergy, {4, 32, 256}}), b = a;
  // 8 -> server 0, 5 -> server 1, 4 -> server 2, 2 (an ideal equal to the share) -> server 1,
  // 2 finds only one GPU free and is skipped, 1 -> server 1.
  const std::vector<SchedJob> jobs = {Job(1, 8, 0, 0),    Job(2, 5, 0, 0), Job(3, 4, 0, 0),
                                      Job(4, 2, 3, 62.5), Job(5, 2, 0, 0), Job(6, 1, 0, 0)};
  const std::vector<JobPlacement> tuned =
      TuneMechanism(/*sort_by_demand=*/true).PlaceRound(Queue(jobs), a);
  const std::vector<JobPlacement> prop = ProportionalMechanism().PlaceRound(Queue(jobs), b);
  ASSERT_EQ(tuned.size(), 5u);
  EXPECT_EQ(Find(tuned, 5), nullptr);
  ExpectSamePlacements(tuned, prop);
}

TEST(MechanismFactoryTest, MakesGreedyAndTune) {
  EXPECT_NE(dynamic_cast<GreedyMechanism*>(MakeMechanism("greedy").get()), nullptr);
  EXPECT_NE(dynamic_cast<TuneMechanism*>(MakeMechanism("tune").get()), nullptr);
}

// ---- Randomised properties ----

struct RandomRound {
  std::vector<ServerShape> shapes;
  std::vector<SchedJob> jobs;
};

RandomRound MakeRound(std::mt19937_64& rng, bool proportional_only) {
  RandomRound r;
  const int synergy = std::uniform_int_distribution<int>(1, 20)(rng);
  r.shapes.assign(synergy, kSynergy);
  const ServerShape others[] = {{4, 32, 256}, {8, 48, 1000}, {2, 6, 100}, {8, 16, 256}};
  const int odd = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 3 : 0;
  for (int i = 0; i < odd; ++i) r.shapes.push_back(others[rng() % 4]);
  if (rng() % 25 == 0) {  // more distinct shapes than the demands' per-shape cache holds
    r.shapes.clear();
    for (int i = 0; i < 70; ++i) r.shapes.push_back({8, 16 + 0.25 * i, 400 + 2.0 * i});
  }
  std::shuffle(r.shapes.begin(), r.shapes.end(), rng);
  int32_t gpus = 0;
  for (const ServerShape& s : r.shapes) gpus += s.gpus;
  const auto& models = ModelCatalog::BuiltIn().models();
  std::discrete_distribution<int> mix({60, 12, 15, 10, 3});
  const int32_t sizes[] = {1, 2, 4, 8, 16};
  const int n = std::uniform_int_distribution<int>(1, std::max(2, gpus))(rng);
  for (int i = 0; i < n; ++i) {
    const int32_t g = sizes[mix(rng)];
    if (proportional_only) {
      r.jobs.push_back(Job(100 + i, g, 0, 0));
    } else if (rng() % 5 == 0) {
      r.jobs.push_back(RandomSensitive(100 + i, g, rng));
    } else {
      r.jobs.push_back(Model(100 + i, g, models[rng() % models.size()]));
    }
  }
  return r;
}

// No server overcommitted, parts on distinct servers with the job's GPUs, and the ledger holding
// exactly the placements.
void ExpectSound(const RandomRound& r, const std::vector<JobPlacement>& ps,
                 const ClusterLedger& ledger) {
  std::vector<ServerShape> used(r.shapes.size(), ServerShape{0, 0, 0});
  for (const JobPlacement& p : ps) {
    std::set<int32_t> servers;
    for (const PlacementPart& part : p.parts) {
      ASSERT_GT(part.gpus, 0);
      ASSERT_TRUE(servers.insert(part.server).second) << "job " << p.job_id;
      used[part.server].gpus += part.gpus;
      used[part.server].cpus += part.cpus;
      used[part.server].memory_gb += part.memory_gb;
    }
  }
  int32_t free_gpus = 0;
  for (size_t s = 0; s < r.shapes.size(); ++s) {
    ASSERT_LE(used[s].gpus, r.shapes[s].gpus);
    ASSERT_LE(used[s].cpus, r.shapes[s].cpus + kEps) << "server " << s;
    ASSERT_LE(used[s].memory_gb, r.shapes[s].memory_gb + kEps) << "server " << s;
    const ServerShape& f = ledger.free(static_cast<int32_t>(s));
    ASSERT_EQ(f.gpus, r.shapes[s].gpus - used[s].gpus);
    ASSERT_NEAR(f.cpus, r.shapes[s].cpus - used[s].cpus, kEps);
    ASSERT_NEAR(f.memory_gb, r.shapes[s].memory_gb - used[s].memory_gb, kEps);
    free_gpus += f.gpus;
  }
  ASSERT_EQ(ledger.free_gpus(), free_gpus);
}

const SchedJob& JobOf(const RandomRound& r, int64_t id) { return r.jobs[id - 100]; }

// Replays placements by GPUs alone: each job consolidated when its GPUs fit one server at its
// turn, otherwise spread over the fewest servers.
void ExpectConsolidatedOrFewest(const RandomRound& r, const std::vector<JobPlacement>& ps) {
  ClusterLedger replay(r.shapes);
  for (const JobPlacement& p : ps) {
    const int32_t g = JobOf(r, p.job_id).gpus;
    ASSERT_EQ(p.gpus(), g);
    if (BestFitGpus(replay, g) >= 0) {
      ASSERT_EQ(p.parts.size(), 1u) << "job " << p.job_id;
    } else {
      ASSERT_EQ(p.parts.size(), SpreadGpus(replay, g).size()) << "job " << p.job_id;
    }
    for (const PlacementPart& part : p.parts) replay.Take(part.server, part.gpus, 0, 0);
  }
}

// Both placement orders: the policy's (Synergy's simulator) and by demand (the paper's text).
class TuneBothOrders : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Orders, TuneBothOrders, ::testing::Values(false, true));

TEST_P(TuneBothOrders, RandomRoundsPlaceTheProportionalJobsAtNoLessThanTheirShare) {
  std::mt19937_64 rng(2022);
  int reverted_rounds = 0;
  for (int round = 0; round < 400; ++round) {
    const RandomRound r = MakeRound(rng, false);
    ClusterLedger tl(r.shapes), pl(r.shapes);
    const std::vector<JobPlacement> tuned = TuneMechanism(GetParam()).PlaceRound(Queue(r.jobs), tl);
    const std::vector<JobPlacement> prop = ProportionalMechanism().PlaceRound(Queue(r.jobs), pl);
    ExpectSound(r, tuned, tl);
    ExpectConsolidatedOrFewest(r, tuned);
    std::set<int64_t> tuned_ids, prop_ids;
    for (const JobPlacement& p : tuned) tuned_ids.insert(p.job_id);
    for (const JobPlacement& p : prop) prop_ids.insert(p.job_id);
    ASSERT_EQ(tuned_ids, prop_ids) << "round " << round;
    bool below_ideal = false;
    for (const JobPlacement& p : tuned) {
      const SchedJob& job = JobOf(r, p.job_id);
      ASSERT_GE(PlacementThroughput(job, p), ProportionalThroughput(job, tl, p) - 1e-9)
          << "round " << round << " job " << p.job_id;
      for (const PlacementPart& part : p.parts) {
        const AuxDemand ideal = IdealDemand(job, tl, part.server, part.gpus);
        below_ideal = below_ideal || part.cpus < ideal.cpus - kEps;
      }
    }
    reverted_rounds += below_ideal;
  }
  EXPECT_GT(reverted_rounds, 50);  // the fallbacks were exercised
}

TEST_P(TuneBothOrders, RandomAllProportionalRoundsEqualTheProportionalMechanism) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 400; ++round) {
    RandomRound r = MakeRound(rng, true);
    // In TUNE's own order (most GPUs first when sorting by demand), the two must agree part for
    // part.
    if (GetParam()) {
      std::stable_sort(r.jobs.begin(), r.jobs.end(),
                       [](const SchedJob& a, const SchedJob& b) { return a.gpus > b.gpus; });
    }
    ClusterLedger tl(r.shapes), pl(r.shapes);
    const std::vector<JobPlacement> tuned = TuneMechanism(GetParam()).PlaceRound(Queue(r.jobs), tl);
    const std::vector<JobPlacement> prop = ProportionalMechanism().PlaceRound(Queue(r.jobs), pl);
    ExpectSamePlacements(tuned, prop);
    ASSERT_FALSE(HasFailure()) << "round " << round;
  }
}

// Brute force: could the job have been placed at its ideal on `ledger`? Consolidated on any
// server with its GPUs free, or, where none has, over the most-free-first servers.
bool FitsAtIdeal(const SchedJob& job, const ClusterLedger& ledger) {
  if (job.gpus > ledger.free_gpus()) return false;
  bool some_server_holds_gpus = false;
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    if (ledger.free(s).gpus < job.gpus) continue;
    some_server_holds_gpus = true;
    const AuxDemand aux = IdealDemand(job, ledger, s, job.gpus);
    if (ledger.Fits(s, job.gpus, aux.cpus, aux.memory_gb)) return true;
  }
  if (some_server_holds_gpus) return false;
  std::vector<int32_t> order(ledger.server_count());
  for (int32_t s = 0; s < ledger.server_count(); ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(), [&ledger](int32_t a, int32_t b) {
    return ledger.free(a).gpus > ledger.free(b).gpus;
  });
  int32_t left = job.gpus;
  for (size_t i = 0; i < order.size() && left > 0; ++i) {
    const int32_t take = std::min(left, ledger.free(order[i]).gpus);
    if (take == 0) break;
    const AuxDemand aux = IdealDemand(job, ledger, order[i], take);
    if (!ledger.Fits(order[i], take, aux.cpus, aux.memory_gb)) return false;
    left -= take;
  }
  return left == 0;
}

TEST(GreedyMechanismTest, RandomRoundsSkipOnlyJobsThatDidNotFitAtTheirTurn) {
  std::mt19937_64 rng(31);
  int skipped_with_free_gpus = 0;
  for (int round = 0; round < 400; ++round) {
    const RandomRound r = MakeRound(rng, false);
    ClusterLedger gl(r.shapes);
    const std::vector<JobPlacement> ps = GreedyMechanism().PlaceRound(Queue(r.jobs), gl);
    ExpectSound(r, ps, gl);
    ExpectConsolidatedOrFewest(r, ps);
    // Replays the round in the policy's order on a fresh ledger.
    ClusterLedger replay(r.shapes);
    size_t next = 0;
    for (const SchedJob& job : r.jobs) {
      if (next < ps.size() && ps[next].job_id == job.id) {
        for (const PlacementPart& p : ps[next].parts) {
          const AuxDemand ideal = IdealDemand(job, replay, p.server, p.gpus);
          ASSERT_NEAR(p.cpus, ideal.cpus, kEps);
          ASSERT_NEAR(p.memory_gb, ideal.memory_gb, kEps);
          replay.Take(p.server, p.gpus, p.cpus, p.memory_gb);
        }
        ++next;
        continue;
      }
      ASSERT_FALSE(FitsAtIdeal(job, replay)) << "round " << round << " job " << job.id;
      skipped_with_free_gpus += job.gpus <= replay.free_gpus();
    }
    ASSERT_EQ(next, ps.size());
  }
  EXPECT_GT(skipped_with_free_gpus, 50);  // skips that left GPUs idle were exercised
}

// In the policy's order (the default, Synergy's simulator), the first job in the queue is placed
// first and takes its ideal even when a larger demand comes after it.
TEST(TuneMechanismTest, DefaultOrderIsThePolicysOrder) {
  ClusterLedger ledger({{8, 24, 500}});
  std::vector<SchedJob> jobs;
  SchedJob small;
  small.id = 1;
  small.gpus = 1;
  small.ideal_cpus_per_gpu = 20;
  small.ideal_memory_gb_per_gpu = 62.5;
  small.speedup_at_ideal = 1.5;
  SchedJob big = small;
  big.id = 2;
  big.gpus = 4;
  big.ideal_cpus_per_gpu = 5;
  jobs = {small, big};
  const std::vector<JobPlacement> ps = TuneMechanism().PlaceRound(Queue(jobs), ledger);
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].job_id, 1);
  ClusterLedger other({{8, 24, 500}});
  const std::vector<JobPlacement> sorted =
      TuneMechanism(/*sort_by_demand=*/true).PlaceRound(Queue(jobs), other);
  EXPECT_EQ(sorted[0].job_id, 2);  // 4 GPUs before 1
}

}  // namespace
}  // namespace troupe::scheduling
