// Spare servers in the round engine (faults.recovery.spare_servers, docs/faults.md "Recovery"),
// driven directly: the spares never take a placement; a job that loses a server mid-round is
// relet at once on a spare, from the failure to the round's end, and the failed server takes the
// spare's place in the pool; without an up spare the job waits for the next round as before.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/unit/cluster_scheduler_harness.hpp"

namespace troupe::scheduling {
namespace {

using testing::EmulatedCluster;
using testing::Fifo;
using testing::GpusByServer;
using testing::Servers;

ClusterSchedulerOptions WithSpares(int32_t spares) {
  ClusterSchedulerOptions o = Fifo();
  o.spare_servers = spares;
  return o;
}

JobProgress Report(int64_t job_id, int64_t round, double lease_start_s, bool ran, int32_t gpus,
                   int64_t left) {
  JobProgress p;
  p.job_id = job_id;
  p.round = round;
  p.lease_start_s = lease_start_s;
  p.ran = ran;
  p.gpus = ran ? gpus : 0;
  p.iterations_left = left;
  return p;
}

TEST(ClusterSchedulerSpares, SparesNeverTakeAPlacement) {
  // Three 4-GPU servers, the last a spare: two 4-GPU jobs run, the third waits, round after round.
  EmulatedCluster cluster(WithSpares(1), Servers(3, 4));
  for (int64_t id = 0; id < 3; ++id) cluster.Submit(id, 4, 3000, 0);
  for (double start_s = 0; start_s < 1500; start_s += 300) {
    cluster.StartAt(start_s);
    const std::map<int32_t, int32_t> gpus = GpusByServer(cluster.out);
    EXPECT_FALSE(gpus.contains(2)) << "the spare was placed on at " << start_s << " s";
    EXPECT_EQ(cluster.out.Granted().size(), 2u);
    cluster.CloseRound();
  }
}

TEST(ClusterSchedulerSpares, AJobThatLosesAServerTakesASpareAtOnce) {
  EmulatedCluster cluster(WithSpares(1), Servers(3, 4));
  cluster.Submit(0, 8, 100000, 0);  // a gang over servers 0 and 1
  cluster.StartAt(0);
  ASSERT_EQ(GpusByServer(cluster.out), (std::map<int32_t, int32_t>{{0, 4}, {1, 4}}));
  const size_t before = cluster.out.leases.size();
  cluster.engine().ServerDown(1, 100);
  ASSERT_EQ(cluster.out.lost.size(), 1u);
  // Relet now, not at the next round: the part it kept and the spare, from 100 s to the round's
  // end.
  ASSERT_EQ(GpusByServer(cluster.out, before), (std::map<int32_t, int32_t>{{0, 4}, {2, 4}}));
  for (size_t i = before; i < cluster.out.leases.size(); ++i) {
    const ServerRound& relet = cluster.out.leases[i].second;
    EXPECT_EQ(relet.round, 0);
    EXPECT_EQ(relet.start_s, 100);
    EXPECT_EQ(relet.end_s, 300);
    ASSERT_EQ(relet.grants.size(), 1u);
    EXPECT_EQ(relet.grants[0].parts, 2);
  }
  // The lost lease's report is taken, and the relet's is awaited still.
  cluster.engine().OnProgress(Report(0, 0, 0, false, 0, 100000));
  EXPECT_TRUE(cluster.engine().Awaited(0));
  cluster.engine().OnProgress(Report(0, 0, 0, false, 0, 100000));  // a copy: nothing more
  EXPECT_TRUE(cluster.engine().Awaited(0));
  cluster.engine().OnRoundTimer();
  EXPECT_FALSE(cluster.out.start_at.has_value()) << "the round closed without the relet's report";
  cluster.engine().OnProgress(Report(0, 0, 100, true, 8, 99800));
  EXPECT_FALSE(cluster.engine().Awaited(0));
  ASSERT_EQ(cluster.out.start_at, 300);
  // The job stays on the spare; the failed server, back, is the pool's spare now.
  cluster.engine().ServerUp(1);
  cluster.StartAt(300);
  EXPECT_EQ(GpusByServer(cluster.out), (std::map<int32_t, int32_t>{{0, 4}, {2, 4}}));
}

TEST(ClusterSchedulerSpares, ARepairedServerIsTheSpareForTheNextFailure) {
  EmulatedCluster cluster(WithSpares(1), Servers(3, 4));
  cluster.Submit(0, 8, 100000, 0);
  cluster.StartAt(0);
  cluster.engine().ServerDown(1, 100);  // the job moves to server 2; server 1 joins the pool
  cluster.engine().OnProgress(Report(0, 0, 0, false, 0, 100000));
  cluster.engine().OnRoundTimer();
  cluster.engine().OnProgress(Report(0, 0, 100, true, 8, 99800));
  cluster.engine().ServerUp(1);
  cluster.StartAt(300);
  const size_t before = cluster.out.leases.size();
  cluster.engine().ServerDown(2, 400);
  EXPECT_EQ(GpusByServer(cluster.out, before), (std::map<int32_t, int32_t>{{0, 4}, {1, 4}}));
}

TEST(ClusterSchedulerSpares, ServersLostAtOneInstantCostOneRestartOnAsManySpares) {
  EmulatedCluster cluster(WithSpares(2), Servers(4, 4));
  cluster.Submit(0, 8, 100000, 0);  // servers 0 and 1; spares 2 and 3
  cluster.StartAt(0);
  cluster.engine().ServerDown(0, 100);
  const size_t before = cluster.out.leases.size();
  cluster.engine().ServerDown(1, 100);  // a switch took both
  EXPECT_EQ(cluster.out.lost.size(), 1u) << "the job restarts once";
  EXPECT_EQ(GpusByServer(cluster.out, before), (std::map<int32_t, int32_t>{{2, 4}, {3, 4}}));
  cluster.engine().OnProgress(Report(0, 0, 0, false, 0, 100000));
  cluster.engine().OnRoundTimer();
  EXPECT_TRUE(cluster.engine().Awaited(0));
  cluster.engine().OnProgress(Report(0, 0, 100, true, 8, 99800));
  EXPECT_EQ(cluster.out.start_at, 300);
}

TEST(ClusterSchedulerSpares, JobsOfOneFailedServerShareOneSpareAndThePoolKeepsItsSize) {
  // Four 4-GPU servers, 2 and 3 spares; two 2-GPU jobs share server 0.
  EmulatedCluster cluster(WithSpares(2), Servers(4, 4));
  cluster.Submit(0, 2, 100000, 0);
  cluster.Submit(1, 2, 100000, 0);
  for (int64_t id = 2; id < 5; ++id) cluster.Submit(id, 4, 100000, 200);
  cluster.StartAt(0);
  ASSERT_EQ(GpusByServer(cluster.out), (std::map<int32_t, int32_t>{{0, 4}}));
  const size_t before = cluster.out.leases.size();
  cluster.engine().ServerDown(0, 100);
  EXPECT_EQ(GpusByServer(cluster.out, before), (std::map<int32_t, int32_t>{{2, 4}}))
      << "both jobs move to the one spare that took server 0's place";
  for (int64_t id = 0; id < 2; ++id) cluster.engine().OnProgress(Report(id, 0, 0, false, 0, 1e5));
  cluster.engine().OnRoundTimer();
  for (int64_t id = 0; id < 2; ++id) cluster.engine().OnProgress(Report(id, 0, 100, true, 2, 9e4));
  ASSERT_EQ(cluster.out.start_at, 300);
  // The pool is servers 0 (repaired) and 3: of three 4-GPU jobs that came, one finds room.
  cluster.engine().ServerUp(0);
  cluster.StartAt(300);
  EXPECT_EQ(GpusByServer(cluster.out), (std::map<int32_t, int32_t>{{1, 4}, {2, 4}}));
}

TEST(ClusterSchedulerSpares, WithoutAnUpSpareTheJobWaitsForTheNextRound) {
  EmulatedCluster cluster(WithSpares(1), Servers(3, 4));
  cluster.Submit(0, 4, 100000, 0);
  cluster.StartAt(0);
  const int32_t held = GpusByServer(cluster.out).begin()->first;
  cluster.engine().ServerDown(2, 50);  // the spare is down
  const size_t before = cluster.out.leases.size();
  cluster.engine().ServerDown(held, 100);
  EXPECT_EQ(cluster.out.lost.size(), 1u);
  EXPECT_EQ(cluster.out.leases.size(), before) << "relet with no spare up";
  cluster.engine().OnProgress(Report(0, 0, 0, false, 0, 100000));
  EXPECT_FALSE(cluster.engine().Awaited(0));
}

TEST(ClusterSchedulerSpares, NoSparesOrAFailureAfterTheRoundsTimerReletNothing) {
  EmulatedCluster none(WithSpares(0), Servers(3, 4));
  none.Submit(0, 4, 100000, 0);
  none.StartAt(0);
  size_t before = none.out.leases.size();
  none.engine().ServerDown(GpusByServer(none.out).begin()->first, 100);
  EXPECT_EQ(none.out.leases.size(), before);

  EmulatedCluster late(WithSpares(1), Servers(3, 4));
  late.Submit(0, 4, 100000, 0);
  late.StartAt(0);
  late.engine().OnRoundTimer();
  before = late.out.leases.size();
  late.engine().ServerDown(GpusByServer(late.out).begin()->first, 300);
  EXPECT_EQ(late.out.leases.size(), before) << "the round's lease is over: nothing to relet";
}

TEST(ClusterSchedulerSpares, TheSameFailuresGiveTheSameDecisions) {
  const auto run = [] {
    EmulatedCluster cluster(WithSpares(2), Servers(6, 4));
    for (int64_t id = 0; id < 5; ++id) cluster.Submit(id, 4 * (1 + id % 2), 2000, 100.0 * id);
    cluster.StartAt(0);
    cluster.engine().ServerDown(0, 30);
    cluster.engine().ServerDown(1, 60);
    return cluster.out.log;
  };
  const std::vector<std::string> first = run();
  EXPECT_EQ(first, run());
  EXPECT_GT(first.size(), 4u);
}

}  // namespace
}  // namespace troupe::scheduling
