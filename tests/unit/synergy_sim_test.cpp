// GREEDY and TUNE as Synergy's simulator codes them (scheduling/synergy_sim.hpp), on hand-made
// rounds where its rules and the paper's (greedy.hpp, tune.hpp) part ways: a job whose GPUs fit
// one server but whose CPUs do not is spread over the servers with the fewest free GPUs, TUNE
// makes room on the first server that has the job's GPUs (not the best fit) and reverts a peer on
// every server it spans, and under Synergy's LAS a job whose CPUs do not fit leaves its GPUs idle.
// The job-for-job replays against Synergy's simulator are tests/integration/synergy_replay*.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "scheduling/demand.hpp"
#include "scheduling/mechanism_registry.hpp"

namespace troupe::scheduling {
namespace {

constexpr double kEps = 1e-9;
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

std::vector<JobPlacement> Place(const char* mechanism, const std::vector<SchedJob>& jobs,
                                ClusterLedger& ledger) {
  std::vector<const SchedJob*> queue;
  for (const SchedJob& j : jobs) queue.push_back(&j);
  return MakeMechanism(mechanism)->PlaceRound(queue, ledger);
}

const JobPlacement* Find(const std::vector<JobPlacement>& ps, int64_t id) {
  for (const JobPlacement& p : ps) {
    if (p.job_id == id) return &p;
  }
  return nullptr;
}

// The parts of a job as (server, gpus, cpus, memory), in order.
void ExpectParts(const JobPlacement* p, const std::vector<PlacementPart>& want) {
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->parts.size(), want.size()) << "job " << p->job_id;
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(p->parts[k].server, want[k].server) << "job " << p->job_id << " part " << k;
    EXPECT_EQ(p->parts[k].gpus, want[k].gpus) << "job " << p->job_id << " part " << k;
    EXPECT_NEAR(p->parts[k].cpus, want[k].cpus, kEps) << "job " << p->job_id << " part " << k;
    EXPECT_NEAR(p->parts[k].memory_gb, want[k].memory_gb, kEps) << "job " << p->job_id;
  }
}

// Two 1-GPU jobs of 20 CPUs leave 4 CPUs on each server; a 2-GPU job of 4 CPUs a GPU fits no
// single server, so Synergy's GREEDY spreads it, one GPU on each; the paper's skips it.
TEST(SynergySim, GreedySpreadsAJobWhoseCpusFitNoSingleServer) {
  const std::vector<SchedJob> jobs = {Job(0, 1, 20, 62.5), Job(1, 1, 20, 62.5), Job(2, 2, 4, 62.5)};
  ClusterLedger ledger({kSynergy, kSynergy});
  const std::vector<JobPlacement> ps = Place("greedy_synergy_sim", jobs, ledger);
  ExpectParts(Find(ps, 0), {{0, 1, 20, 62.5}});
  ExpectParts(Find(ps, 1), {{1, 1, 20, 62.5}});
  ExpectParts(Find(ps, 2), {{0, 1, 4, 62.5}, {1, 1, 4, 62.5}});
  EXPECT_EQ(ledger.free_gpus(), 12);

  ClusterLedger paper({kSynergy, kSynergy});
  EXPECT_EQ(Find(Place("greedy", jobs, paper), 2), nullptr);
}

// Server 0 holds jobs of 12 and 9 CPUs (3 left, 6 GPUs free), server 1 a 4-GPU job of 24 CPUs
// (4 GPUs free). A 4-GPU job fits neither at its ideal nor at its share (12 CPUs), so TUNE makes
// room: Synergy's code on server 0, the first with 4 free GPUs, reverting the job of most CPUs a
// GPU there (12 -> 3 frees the 9 missing) and no more; the paper's rule on server 1, the best fit.
TEST(SynergySim, TuneMakesRoomOnTheFirstServerWithTheGpus) {
  const std::vector<SchedJob> jobs = {Job(0, 1, 12, 125), Job(1, 1, 9, 62.5), Job(2, 4, 6, 62.5),
                                      Job(3, 4, 6, 62.5)};
  ClusterLedger ledger({kSynergy, kSynergy});
  const std::vector<JobPlacement> ps = Place("tune_synergy_sim", jobs, ledger);
  ExpectParts(Find(ps, 0), {{0, 1, 3, 62.5}});
  ExpectParts(Find(ps, 1), {{0, 1, 9, 62.5}});
  ExpectParts(Find(ps, 2), {{1, 4, 24, 250}});
  ExpectParts(Find(ps, 3), {{0, 4, 12, 250}});

  ClusterLedger paper({kSynergy, kSynergy});
  const std::vector<JobPlacement> theirs = Place("tune", jobs, paper);
  ExpectParts(Find(theirs, 2), {{1, 4, 12, 250}});
  ExpectParts(Find(theirs, 3), {{1, 4, 12, 250}});
}

// A spread peer reverted to its share is reverted on every server it spans, not only on the one
// room is made on. Jobs 0 and 1 hold 6 GPUs at their share (18 CPUs) on each server; job 2 (6
// CPUs a GPU) fits no server whole and spreads, 1 GPU and 6 CPUs on each. Job 3 finds no CPUs:
// room is made on server 0, where job 0 has no excess (reverted, a no-op) and job 2 has 3 CPUs.
TEST(SynergySim, TuneRevertsASpreadPeerOnEveryServer) {
  const std::vector<SchedJob> jobs = {Job(0, 6, 3, 62.5), Job(1, 6, 3, 62.5), Job(2, 2, 6, 62.5),
                                      Job(3, 1, 4, 62.5)};
  ClusterLedger ledger({kSynergy, kSynergy});
  const std::vector<JobPlacement> ps = Place("tune_synergy_sim", jobs, ledger);
  ExpectParts(Find(ps, 0), {{0, 6, 18, 375}});
  ExpectParts(Find(ps, 1), {{1, 6, 18, 375}});
  ExpectParts(Find(ps, 2), {{0, 1, 3, 62.5}, {1, 1, 3, 62.5}});
  ExpectParts(Find(ps, 3), {{0, 1, 3, 62.5}});
  EXPECT_NEAR(ledger.free(1).cpus, 3, kEps);  // what job 2's part there gave back
}

// A peer below its share of memory is reverted before the one that holds the memory it needs
// (job 0: 9 CPUs and 5 GB for 1 GPU; job 1: 3 CPUs and 490 GB). Job 2 (4 GPUs) needs memory:
// reverting job 0 raises its memory to its share before job 1 gives back its excess. All given
// back first, then the shares taken, the server is never overdrawn (a Debug build asserts it).
TEST(SynergySim, TuneRevertingPeersNeverOverdrawsAServer) {
  const std::vector<SchedJob> jobs = {Job(0, 1, 9, 5), Job(1, 1, 3, 490), Job(2, 4, 6, 62.5)};
  ClusterLedger ledger({kSynergy});
  const std::vector<JobPlacement> ps = Place("tune_synergy_sim", jobs, ledger);
  ExpectParts(Find(ps, 0), {{0, 1, 3, 62.5}});
  ExpectParts(Find(ps, 1), {{0, 1, 3, 62.5}});
  ExpectParts(Find(ps, 2), {{0, 4, 12, 250}});
  EXPECT_NEAR(ledger.free(0).memory_gb, 500 - 62.5 - 62.5 - 250, kEps);
  EXPECT_GE(ledger.free(0).cpus, 0);
}

// Synergy's LAS picks the jobs whose GPUs fit before placing any: under GREEDY a picked job
// whose CPUs do not fit leaves its GPUs idle, and the jobs after it were never picked.
TEST(SynergySim, GreedyUnderLasLeavesTheGpusOfAJobThatDoesNotFitIdle) {
  const std::vector<SchedJob> jobs = {Job(0, 4, 5, 62.5), Job(1, 4, 6, 62.5), Job(2, 2, 1, 20)};
  ClusterLedger las({kSynergy});
  const std::vector<JobPlacement> ps = Place("greedy_synergy_sim_las", jobs, las);
  ASSERT_EQ(ps.size(), 1u);
  ExpectParts(Find(ps, 0), {{0, 4, 20, 250}});
  EXPECT_EQ(las.free_gpus(), 4);

  ClusterLedger fifo({kSynergy});
  EXPECT_EQ(Place("greedy_synergy_sim", jobs, fifo).size(), 2u);  // job 2 goes on
}

// Synergy's code's walk for 1-GPU jobs under GREEDY: each job, in order, to the first server by
// (free GPUs, index) whose free CPUs and memory hold its ideal demand there, or it waits. The
// placements as (job, part), in order.
std::vector<std::pair<int64_t, PlacementPart>> WalkAsSynergysCode(const std::vector<SchedJob>& jobs,
                                                                  ClusterLedger ledger) {
  const RoundDemands demands(ledger);
  std::vector<std::pair<int64_t, PlacementPart>> placed;
  for (const SchedJob& sched_job : jobs) {
    const RoundDemands::Job job = demands.Prepare(sched_job);
    std::vector<int32_t> order;
    for (int32_t s = 0; s < ledger.server_count(); ++s) {
      if (ledger.free(s).gpus > 0) order.push_back(s);
    }
    std::stable_sort(order.begin(), order.end(), [&ledger](int32_t a, int32_t b) {
      return ledger.free(a).gpus < ledger.free(b).gpus;
    });
    for (int32_t s : order) {
      const AuxDemand d = demands.Ideal(job, s, 1);
      if (!ledger.Fits(s, 1, d.cpus, d.memory_gb)) continue;
      ledger.Take(s, 1, d.cpus, d.memory_gb);
      placed.push_back({job.id, PlacementPart{s, 1, d.cpus, d.memory_gb}});
      break;
    }
  }
  return placed;
}

// Servers of four shapes, partly taken, and 1-GPU jobs whose ideals are capped at what a server
// of each shape holds, so their demands differ by shape: the mechanism's search skips servers by
// a bound over the shapes, and must never skip one that fits.
TEST(SynergySim, GreedyTakesTheFirstServerThatFitsAcrossServerShapes) {
  const std::vector<ServerShape> shapes = {{8, 24, 500}, {8, 12, 250}, {8, 48, 1000}, {4, 16, 200}};
  constexpr double kTakenParts[] = {0, 0, 0.25, 0.5, 0.9};
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<ServerShape> servers;
    for (int s = 0; s < 12; ++s) servers.push_back(shapes[rng() % shapes.size()]);
    ClusterLedger ledger(servers);
    for (int s = 0; s < 12; ++s) {
      const ServerShape& f = ledger.free(s);
      const int32_t gpus = static_cast<int32_t>(rng() % (f.gpus + 1));
      const double part = kTakenParts[rng() % std::size(kTakenParts)];
      ledger.Take(s, gpus, f.cpus * part, f.memory_gb * part * 0.9);
    }
    ASSERT_FALSE(RoundDemands(ledger).uniform());
    std::vector<SchedJob> jobs;
    for (int j = 0; j < 40; ++j) {
      jobs.push_back(Job(j, 1, 1 + static_cast<double>(rng() % 30), 10 + (rng() % 600)));
    }
    const auto expected = WalkAsSynergysCode(jobs, ledger);
    const std::vector<JobPlacement> got = Place("greedy_synergy_sim", jobs, ledger);
    ASSERT_EQ(got.size(), expected.size()) << "trial " << trial;
    for (size_t k = 0; k < got.size(); ++k) {
      ASSERT_EQ(got[k].job_id, expected[k].first) << "trial " << trial;
      ExpectParts(&got[k], {expected[k].second});
    }
  }
}

}  // namespace
}  // namespace troupe::scheduling
