// Elastic jobs in the round engine (faults.recovery.on_server_loss continue_smaller, docs/faults.md
// "Recovery"), driven directly: a job that loses a server mid-round goes on at once on the parts
// it kept, never below min_size_fraction of its GPUs; it keeps those parts at the next round while
// no room holds it whole, and grows back when room does.
#include <gtest/gtest.h>

#include <map>

#include "tests/unit/cluster_scheduler_harness.hpp"

namespace troupe::scheduling {
namespace {

using testing::EmulatedCluster;
using testing::Fifo;
using testing::GpusByServer;
using testing::Servers;

ClusterSchedulerOptions Elastic(double fraction) {
  ClusterSchedulerOptions o = Fifo();
  o.continue_smaller_fraction = fraction;
  return o;
}

JobProgress Report(int64_t job_id, int64_t round, double lease_start_s, int32_t gpus,
                   int64_t left) {
  JobProgress p;
  p.job_id = job_id;
  p.round = round;
  p.lease_start_s = lease_start_s;
  p.ran = gpus > 0;
  p.gpus = gpus;
  p.iterations_left = left;
  return p;
}

TEST(ClusterSchedulerElastic, ServersLostAtOneInstantLeaveTheJobOnWhatItStillHolds) {
  EmulatedCluster cluster(Elastic(0.3), Servers(3, 4));
  cluster.Submit(0, 12, 100000, 0);  // all three servers
  cluster.StartAt(0);
  cluster.engine().ServerDown(0, 100);
  const size_t before = cluster.out.leases.size();
  cluster.engine().ServerDown(1, 100);  // a switch took both
  ASSERT_EQ(GpusByServer(cluster.out, before), (std::map<int32_t, int32_t>{{2, 4}}));
  const ServerRound& relet = cluster.out.leases.back().second;
  // Just after the relet lost with server 1, so that the job takes it as a new lease.
  EXPECT_GT(relet.start_s, 100);
  EXPECT_LT(relet.start_s, 100.001);
  EXPECT_EQ(relet.grants[0].parts, 1);
  cluster.engine().OnProgress(Report(0, 0, 0, 0, 100000));    // the round's lease, lost
  cluster.engine().OnProgress(Report(0, 0, 100, 0, 100000));  // the first relet, lost
  cluster.engine().OnRoundTimer();
  EXPECT_TRUE(cluster.engine().Awaited(0));
  cluster.engine().OnProgress(Report(0, 0, relet.start_s, 4, 99950));
  EXPECT_FALSE(cluster.engine().Awaited(0));
  EXPECT_EQ(cluster.out.start_at, 300);
}

TEST(ClusterSchedulerElastic, AJobGoesOnAtOnceOnTheGpusItKept) {
  EmulatedCluster cluster(Elastic(0.5), Servers(2, 4));
  cluster.Submit(0, 8, 100000, 0);  // both servers
  cluster.StartAt(0);
  const size_t before = cluster.out.leases.size();
  cluster.engine().ServerNotice(1, 700);  // back at 700 s
  cluster.engine().ServerDown(1, 100);
  ASSERT_EQ(cluster.out.lost.size(), 1u);
  ASSERT_EQ(GpusByServer(cluster.out, before), (std::map<int32_t, int32_t>{{0, 4}}));
  const ServerRound& relet = cluster.out.leases.back().second;
  EXPECT_EQ(relet.start_s, 100);
  EXPECT_EQ(relet.grants[0].parts, 1) << "a lease of the part it kept alone";
  cluster.engine().OnProgress(Report(0, 0, 0, 0, 100000));  // the lost lease
  cluster.engine().OnRoundTimer();
  EXPECT_TRUE(cluster.engine().Awaited(0));
  cluster.engine().OnProgress(Report(0, 0, 100, 4, 99900));
  ASSERT_EQ(cluster.out.start_at, 300);
  // Server 1 is still down: the next round keeps it on server 0, at 4 GPUs.
  cluster.StartAt(300);
  EXPECT_EQ(GpusByServer(cluster.out), (std::map<int32_t, int32_t>{{0, 4}}));
  cluster.engine().OnRoundTimer();
  cluster.engine().OnProgress(Report(0, 1, 300, 4, 99700));
  // Repaired: it grows back to both servers.
  cluster.engine().ServerUp(1);
  cluster.StartAt(600);
  EXPECT_EQ(GpusByServer(cluster.out), (std::map<int32_t, int32_t>{{0, 4}, {1, 4}}));
}

TEST(ClusterSchedulerElastic, NeverBelowTheFraction) {
  EmulatedCluster cluster(Elastic(0.75), Servers(2, 4));
  cluster.Submit(0, 8, 100000, 0);
  cluster.StartAt(0);
  const size_t before = cluster.out.leases.size();
  cluster.engine().ServerNotice(1, 700);
  cluster.engine().ServerDown(1, 100);  // 4 of 8 GPUs left, under 0.75
  EXPECT_EQ(cluster.out.leases.size(), before) << "relet below the fraction";
  cluster.engine().OnProgress(Report(0, 0, 0, 0, 100000));
  EXPECT_FALSE(cluster.engine().Awaited(0));
  cluster.engine().OnRoundTimer();
  cluster.StartAt(300);
  EXPECT_TRUE(cluster.out.Granted().empty()) << "it waits for its full size";
}

TEST(ClusterSchedulerElastic, WaitSameSizeReletsNothing) {
  EmulatedCluster cluster(Elastic(0), Servers(2, 4));
  cluster.Submit(0, 8, 100000, 0);
  cluster.StartAt(0);
  const size_t before = cluster.out.leases.size();
  cluster.engine().ServerDown(1, 100);
  EXPECT_EQ(cluster.out.leases.size(), before);
}

TEST(ClusterSchedulerElastic, AnotherJobTakingItsServersSendsItBackToWaiting) {
  EmulatedCluster cluster(Elastic(0.5), Servers(3, 4));
  cluster.Submit(0, 8, 100000, 0);  // servers 0 and 1 (FIFO: the first placed)
  cluster.StartAt(0);
  const std::map<int32_t, int32_t> first = GpusByServer(cluster.out);
  ASSERT_EQ(first.size(), 2u);
  const int32_t lost = first.rbegin()->first;
  cluster.engine().ServerNotice(lost, 700);
  cluster.engine().ServerDown(lost, 100);
  cluster.engine().OnProgress(Report(0, 0, 0, 0, 100000));
  cluster.engine().OnRoundTimer();
  cluster.engine().OnProgress(Report(0, 0, 100, 4, 99900));
  // Two servers up: the job is placed whole again at once, and no longer runs smaller.
  cluster.StartAt(300);
  int32_t gpus = 0;
  for (const auto& [server, n] : GpusByServer(cluster.out)) gpus += n;
  EXPECT_EQ(gpus, 8);
}

}  // namespace
}  // namespace troupe::scheduling
