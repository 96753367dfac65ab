// The round engine (scheduling/cluster_scheduler.hpp) driven directly, without an actor system:
// arrivals become grants, a round never leases more than a server has, reports finish jobs and
// close rounds, the run ends for the reasons it should, standing leases stand, and the same
// events always give the same decisions. Faults and recovery: cluster_scheduler_fault_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/cluster_scheduler_harness.hpp"

namespace troupe::scheduling {
namespace {

using testing::EmulatedCluster;
using testing::EndedRecord;
using testing::Fifo;
using testing::Servers;

TEST(ClusterScheduler, FirstRoundGrantsArrivedJobsAndSpawnsTheirActorsFirst) {
  EmulatedCluster cluster(Fifo(), Servers(2, 4));
  cluster.Submit(0, 2, 3000, 0);
  cluster.Submit(1, 4, 3000, 0);
  cluster.Submit(2, 2, 3000, 0);
  cluster.Submit(3, 1, 3000, 500);  // not yet arrived
  cluster.StartAt(0);
  std::vector<int64_t> granted = cluster.out.Granted();
  std::sort(granted.begin(), granted.end());
  EXPECT_EQ(granted, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(cluster.out.spawned, (std::vector<int64_t>{0, 1, 2}));
  // Each job's actor is spawned before the first server hears of the round.
  const auto& log = cluster.out.log;
  const auto first_lease = std::find_if(
      log.begin(), log.end(), [](const std::string& line) { return line.rfind("lease", 0) == 0; });
  EXPECT_EQ(std::count_if(log.begin(), first_lease,
                          [](const std::string& l) { return l.rfind("spawn", 0) == 0; }),
            3);
  ASSERT_TRUE(cluster.out.round_end.has_value());
  EXPECT_EQ(cluster.out.round_end->first, 0);
  EXPECT_EQ(cluster.out.round_end->second, 300);
  for (const auto& [server, round] : cluster.out.leases) {
    EXPECT_EQ(round.start_s, 0);
    EXPECT_EQ(round.end_s, 300);
    for (const Grant& g : round.grants) {
      EXPECT_EQ(g.rounds_stood, 0);
      EXPECT_EQ(g.type_speed, 1);
      EXPECT_EQ(g.cpus, 3.0 * g.gpus);  // the proportional share
    }
  }
}

TEST(ClusterScheduler, RoundsNeverLeaseMoreThanAServerHas) {
  ClusterSchedulerOptions options = Fifo();
  for (const char* policy : {"fifo", "srtf", "las"}) {
    options.policy = policy;
    EmulatedCluster cluster(options, Servers(3, 4));
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> gpus(1, 4), rounds(1, 6), gap(0, 400);
    double at_s = 0;
    for (int64_t id = 0; id < 40; ++id) {
      cluster.Submit(id, gpus(rng), 300 * rounds(rng), at_s);
      at_s += gap(rng);
    }
    cluster.out.start_at = 0;
    int rounds_run = 0;
    while (!cluster.out.run_end && rounds_run++ < 500) {
      const auto next = cluster.out.start_at ? cluster.out.start_at : cluster.out.wake_at;
      ASSERT_TRUE(next.has_value());
      cluster.StartAt(*next);
      std::map<int32_t, int32_t> gpus_on;
      std::map<int32_t, double> cpus_on;
      for (const auto& [server, round] : cluster.out.leases) {
        for (const Grant& g : round.grants) {
          gpus_on[server] += g.gpus;
          cpus_on[server] += g.cpus;
        }
      }
      for (const auto& [server, used] : gpus_on) EXPECT_LE(used, 4) << policy;
      for (const auto& [server, used] : cpus_on) EXPECT_LE(used, 12) << policy;
      if (cluster.out.round_end && !cluster.out.run_end) cluster.CloseRound();
    }
    EXPECT_EQ(cluster.out.run_end->reason, "all jobs finished") << policy;
    EXPECT_EQ(cluster.out.ended.size(), 40u) << policy;
    for (const RoundRecord& r : cluster.out.rounds) EXPECT_LE(r.gpus_allocated, 12) << policy;
  }
}

TEST(ClusterScheduler, AJobFinishesInTheRoundItsIterationsRunOut) {
  EmulatedCluster cluster(Fifo(), Servers(1, 8));
  cluster.Submit(0, 2, 900, 0);  // three rounds of 300 iterations
  cluster.Run();
  const JobRecord* r = EndedRecord(cluster.out, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->failure.empty());
  EXPECT_EQ(r->start_s, 0);
  EXPECT_EQ(r->end_s, 900);
  EXPECT_EQ(r->jct_s, 900);
  EXPECT_EQ(r->rounds_run, 3);
  EXPECT_EQ(r->gpu_seconds, 2 * 900);
  ASSERT_EQ(cluster.out.rounds.size(), 3u);
  EXPECT_EQ(cluster.out.rounds[2].jobs_finished, 1);
  EXPECT_EQ(cluster.out.rounds[0].gpus_allocated, 2);
  EXPECT_EQ(cluster.out.run_end->reason, "all jobs finished");
  EXPECT_EQ(cluster.out.run_end->end_s, 900);
  EXPECT_EQ(cluster.out.run_end->rounds, 3);
}

TEST(ClusterScheduler, AQueuedJobWaitsForGpusAndRunsWhenTheyFree) {
  EmulatedCluster cluster(Fifo(), Servers(1, 2));
  cluster.Submit(0, 2, 600, 0);
  cluster.Submit(1, 2, 300, 0);
  cluster.StartAt(0);
  EXPECT_EQ(cluster.out.Granted(), (std::vector<int64_t>{0}));
  EXPECT_EQ(cluster.out.log.back(), "timer 0");
  cluster.Run();
  EXPECT_EQ(EndedRecord(cluster.out, 0)->end_s, 600);
  EXPECT_EQ(EndedRecord(cluster.out, 1)->start_s, 600);
  EXPECT_EQ(EndedRecord(cluster.out, 1)->end_s, 900);
  EXPECT_EQ(cluster.out.rounds[0].jobs_queued, 1);
}

TEST(ClusterScheduler, AnEmptyQueueSleepsUntilTheRoundOfTheNextArrival) {
  EmulatedCluster cluster(Fifo(), Servers(1, 8));
  cluster.Submit(0, 1, 300, 1000);
  cluster.StartAt(0);
  EXPECT_FALSE(cluster.out.round_end.has_value());
  ASSERT_TRUE(cluster.out.wake_at.has_value());
  EXPECT_EQ(*cluster.out.wake_at, 1200);
  cluster.StartAt(1200);
  EXPECT_EQ(cluster.out.Granted(), (std::vector<int64_t>{0}));
}

TEST(ClusterScheduler, TheRunEndsOnceTheMeasuredJobsFinished) {
  ClusterSchedulerOptions options = Fifo();
  options.measure_first_job = 0;
  options.measure_last_job = 1;
  EmulatedCluster cluster(options, Servers(1, 4));
  cluster.Submit(0, 1, 300, 0);
  cluster.Submit(1, 1, 600, 0);
  cluster.Submit(2, 1, 30000, 0);  // never measured, never finished
  cluster.Run();
  ASSERT_TRUE(cluster.out.run_end.has_value());
  EXPECT_EQ(cluster.out.run_end->reason, "measured jobs finished");
  EXPECT_EQ(cluster.out.run_end->end_s, 600);
  EXPECT_EQ(EndedRecord(cluster.out, 2), nullptr);
  ASSERT_EQ(cluster.out.unfinished.size(), 1u);  // its record, as it stands
  EXPECT_EQ(cluster.out.unfinished[0].job_id, 2);
  EXPECT_EQ(cluster.out.unfinished[0].rounds_run, 2);
  EXPECT_FALSE(cluster.out.unfinished[0].measured);
  EXPECT_EQ(cluster.out.actors_at_end, (std::vector<int64_t>{2}));  // the others left with it
}

TEST(ClusterScheduler, TheDeadlineEndsTheRunAtTheFirstRoundPastIt) {
  ClusterSchedulerOptions options = Fifo();
  options.deadline_s = 600;
  EmulatedCluster cluster(options, Servers(1, 4));
  cluster.Submit(0, 1, 30000, 0);
  cluster.Run();
  EXPECT_EQ(cluster.out.run_end->reason, "deadline");
  EXPECT_EQ(cluster.out.run_end->end_s, 600);
  EXPECT_EQ(cluster.out.rounds.size(), 2u);
}

TEST(ClusterScheduler, AReportIsTakenOnceAndOnlyForTheRoundInFlight) {
  EmulatedCluster cluster(Fifo(), Servers(1, 4));
  cluster.Submit(0, 1, 3000, 0);
  cluster.Submit(1, 1, 3000, 0);
  cluster.StartAt(0);
  cluster.engine().OnRoundTimer();
  JobProgress p;
  p.job_id = 0;
  p.round = 0;
  p.ran = true;
  p.gpus = 1;
  p.iterations_done = 300;
  p.iterations_left = 2700;
  cluster.engine().OnProgress(p);
  cluster.engine().OnProgress(p);  // again: a lost report asked for twice
  p.round = 7;                     // of no round in flight
  cluster.engine().OnProgress(p);
  EXPECT_TRUE(cluster.out.rounds.empty());  // job 1 has not reported
  EXPECT_TRUE(cluster.engine().Awaited(1));
  EXPECT_FALSE(cluster.engine().Awaited(0));
  p.job_id = 1;
  p.round = 0;
  cluster.engine().OnProgress(p);
  ASSERT_EQ(cluster.out.rounds.size(), 1u);
  EXPECT_EQ(cluster.out.start_at, 300);
}

TEST(ClusterScheduler, ReportsForTheRoundsEndWaitForItsTimer) {
  EmulatedCluster cluster(Fifo(), Servers(1, 4));
  cluster.Submit(0, 1, 300, 0);
  cluster.StartAt(0);
  JobProgress p;
  p.job_id = 0;
  p.round = 0;
  p.ran = true;
  p.gpus = 1;
  p.iterations_done = 300;
  p.finished = true;
  p.for_round_end = true;
  EXPECT_TRUE(cluster.engine().FileForRoundEnd(p));
  EXPECT_TRUE(cluster.out.ended.empty());  // filed, not taken
  cluster.engine().OnRoundTimer();
  ASSERT_EQ(cluster.out.ended.size(), 1u);
  EXPECT_EQ(cluster.out.ended[0].end_s, 300);
  EXPECT_EQ(cluster.out.start_at, 300);  // the round closed: the next one finds nothing to run
  cluster.StartAt(300);
  EXPECT_EQ(cluster.out.run_end->reason, "all jobs finished");
}

TEST(ClusterScheduler, AJobLargerThanTheClusterFailsAtOnce) {
  EmulatedCluster cluster(Fifo(), Servers(2, 4));
  cluster.Submit(0, 16, 300, 0);
  cluster.Submit(1, 1, 300, 0);
  cluster.Run();
  const JobRecord* big = EndedRecord(cluster.out, 0);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->failure.rfind("needs 16 GPUs; ", 0), 0u) << big->failure;
  EXPECT_EQ(big->end_s, -1);
  EXPECT_TRUE(EndedRecord(cluster.out, 1)->failure.empty());
}

TEST(ClusterScheduler, AStandingLeaseRunsWithoutGrantsOrReports) {
  ClusterSchedulerOptions options = Fifo();
  options.standing_leases = true;
  EmulatedCluster cluster(options, Servers(1, 4));
  cluster.Submit(0, 2, 1500, 0);  // five rounds
  cluster.Run();
  int leases = 0;
  for (const std::string& line : cluster.out.log) leases += line.rfind("lease", 0) == 0;
  EXPECT_EQ(leases, 1);  // the first round's grant; the lease stands after it
  const JobRecord* r = EndedRecord(cluster.out, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->end_s, 1500);
  EXPECT_EQ(r->rounds_run, 5);
  EXPECT_EQ(r->gpu_seconds, 2 * 1500);
  EXPECT_EQ(cluster.out.rounds.size(), 5u);
}

TEST(ClusterScheduler, AGrantAfterAStandingLeaseTellsTheRoundsItStood) {
  ClusterSchedulerOptions options = Fifo();
  options.policy = "srtf";
  options.standing_leases = true;
  EmulatedCluster cluster(options, Servers(1, 1));
  cluster.Submit(0, 1, 3000, 0);   // ten rounds
  cluster.Submit(1, 1, 600, 900);  // shorter: it preempts job 0 for two rounds
  cluster.Run();
  std::vector<std::string> grants;
  for (const std::string& line : cluster.out.log) {
    if (line.rfind("lease", 0) == 0) grants.push_back(line);
  }
  // Job 0 ran rounds 0-2 (granted once, then stood twice), job 1 rounds 3-4, job 0 again.
  EXPECT_EQ(grants, (std::vector<std::string>{"lease s0 r0 g0:1/0", "lease s0 r3 g1:1/0",
                                              "lease s0 r5 g0:1/2"}));
  EXPECT_EQ(EndedRecord(cluster.out, 1)->end_s, 1500);
  EXPECT_EQ(EndedRecord(cluster.out, 0)->end_s, 3600);
  EXPECT_EQ(EndedRecord(cluster.out, 0)->rounds_run, 10);
}

// Runs a random workload under `options` and returns every decision.
std::vector<std::string> DecisionsOf(const ClusterSchedulerOptions& options, uint64_t seed) {
  EmulatedCluster cluster(options, Servers(4, 4));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> gpus(1, 6), rounds(1, 8), gap(0, 300);
  double at_s = 0;
  for (int64_t id = 0; id < 60; ++id) {
    cluster.Submit(id, gpus(rng), 300 * rounds(rng), at_s);
    at_s += gap(rng);
  }
  cluster.Run();
  EXPECT_TRUE(cluster.out.run_end.has_value());
  return cluster.out.log;
}

TEST(ClusterScheduler, TheSameEventsGiveTheSameDecisions) {
  for (const char* policy : {"fifo", "srtf", "las", "ftf"}) {
    for (bool standing : {false, true}) {
      ClusterSchedulerOptions options = Fifo();
      options.policy = policy;
      options.standing_leases = standing;
      const std::vector<std::string> first = DecisionsOf(options, 11);
      EXPECT_GT(first.size(), 60u);
      EXPECT_EQ(first, DecisionsOf(options, 11)) << policy << " standing " << standing;
    }
  }
}

}  // namespace
}  // namespace troupe::scheduling
