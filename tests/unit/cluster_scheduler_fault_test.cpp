// The round engine's fault paths (scheduling/cluster_scheduler.hpp, docs/faults.md), driven
// directly: a dead server's leases are lost and its capacity leaves the plan until it is back, a
// server lost for good fails the jobs that no longer fit, a job's death fails it or waits for its
// respawn, missing reports are asked for again, and a restarted scheduler rebuilds its books.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/cluster_scheduler_harness.hpp"

namespace troupe::scheduling {
namespace {

using testing::EmulatedCluster;
using testing::EndedRecord;
using testing::Fifo;
using testing::Servers;
using Respawn = ClusterScheduler::Respawn;

// The server that holds the job's grant this round (-1: none).
int32_t ServerOf(const testing::RecordingOutput& out, int64_t job_id) {
  for (const auto& [server, round] : out.leases) {
    for (const Grant& g : round.grants) {
      if (g.job_id == job_id) return server;
    }
  }
  return -1;
}

// Two 2-GPU jobs on two 2-GPU servers; job 1's server dies in the first round, due back when the
// next starts (300 s), and the round closes. Returns the server.
int32_t LoseJob1sServerUntilTheNextRound(EmulatedCluster& cluster) {
  cluster.Submit(0, 2, 3000, 0);
  cluster.Submit(1, 2, 3000, 0);
  cluster.StartAt(0);
  const int32_t dead = ServerOf(cluster.out, 1);
  if (dead < 0) return dead;
  cluster.engine().ServerDown(dead);
  cluster.engine().ServerNotice(dead, 300);
  cluster.LoseLeaseOf(1);
  cluster.CloseRound();
  return dead;
}

TEST(ClusterSchedulerFaults, ADeadServersLeasesAreLostAndItsGpusLeaveThePlanUntilItIsBack) {
  EmulatedCluster cluster(Fifo(), Servers(2, 2));
  cluster.Submit(0, 2, 3000, 0);
  cluster.Submit(1, 2, 3000, 0);
  cluster.StartAt(0);
  const int32_t dead = ServerOf(cluster.out, 1);
  ASSERT_GE(dead, 0);
  cluster.engine().ServerDown(dead);
  cluster.engine().ServerNotice(dead, 900);
  ASSERT_EQ(cluster.out.lost.size(), 1u);  // only the job that held a part there
  EXPECT_EQ(cluster.out.lost[0].job_id, 1);
  EXPECT_EQ(cluster.out.lost[0].server, dead);
  cluster.LoseLeaseOf(1);
  cluster.CloseRound();
  ASSERT_EQ(cluster.out.start_at, 300);
  cluster.StartAt(300);
  for (const auto& [server, round] : cluster.out.leases) EXPECT_NE(server, dead);
  EXPECT_EQ(cluster.out.Granted().size(), 1u);
  cluster.CloseRound();
  cluster.engine().ServerUp(dead);
  cluster.StartAt(600);
  EXPECT_EQ(cluster.out.Granted().size(), 2u);
  EXPECT_TRUE(cluster.out.ended.empty());
}

// A server due back at a round's start: the plan waits for the end of that instant, when its
// return (sent at that instant) has been heard, whichever of the instant's messages came first.
TEST(ClusterSchedulerFaults, APlanWaitsOnceForAServerDueBackAtItsStart) {
  EmulatedCluster cluster(Fifo(), Servers(2, 2));
  const int32_t dead = LoseJob1sServerUntilTheNextRound(cluster);
  ASSERT_GE(dead, 0);
  ASSERT_EQ(cluster.out.start_at, 300);
  cluster.StartAt(300);
  EXPECT_EQ(cluster.out.deferred_plan, 300);
  EXPECT_TRUE(cluster.out.leases.empty()) << "planned before the repair was heard";
  EXPECT_FALSE(cluster.out.round_end.has_value());
  cluster.engine().ServerUp(dead);
  cluster.engine().PlanRound(300);
  EXPECT_EQ(cluster.out.Granted().size(), 2u) << "the repaired server joins the round";
  cluster.engine().PlanRound(300);  // a second copy plans nothing
  EXPECT_EQ(cluster.out.Granted().size(), 2u);
}

TEST(ClusterSchedulerFaults, APlanPutOffOnceGoesOnWithoutARepairThatDidNotCome) {
  EmulatedCluster cluster(Fifo(), Servers(2, 2));
  const int32_t dead = LoseJob1sServerUntilTheNextRound(cluster);
  ASSERT_GE(dead, 0);
  cluster.StartAt(300);
  ASSERT_EQ(cluster.out.deferred_plan, 300);
  cluster.engine().PlanRound(300);  // its return was delayed (a link fault): no waiting again
  EXPECT_EQ(cluster.out.Granted().size(), 1u);
  EXPECT_TRUE(cluster.out.round_end.has_value());
}

TEST(ClusterSchedulerFaults, ARepairPutOffByASecondCrashDoesNotHoldThePlan) {
  EmulatedCluster cluster(Fifo(), Servers(2, 2));
  cluster.Submit(0, 2, 3000, 0);
  cluster.StartAt(0);
  cluster.engine().ServerDown(1);
  cluster.engine().ServerNotice(1, 300);
  cluster.engine().ServerNotice(1, 900);  // a second crash moved its return
  cluster.CloseRound();
  cluster.StartAt(300);
  EXPECT_FALSE(cluster.out.deferred_plan.has_value());
  EXPECT_EQ(cluster.out.Granted().size(), 1u);
}

TEST(ClusterSchedulerFaults, AServerLostForGoodFailsTheJobsThatNoLongerFit) {
  EmulatedCluster cluster(Fifo(), Servers(2, 2));
  cluster.Submit(0, 4, 3000, 0);  // a gang over both servers
  cluster.Submit(1, 1, 3000, 0);
  cluster.StartAt(0);
  cluster.engine().ServerDown(1);  // and no restart announced
  cluster.LoseLeaseOf(0);
  cluster.CloseRound();
  cluster.StartAt(300);
  const JobRecord* gang = EndedRecord(cluster.out, 0);
  ASSERT_NE(gang, nullptr);
  EXPECT_EQ(gang->failure, "needs 4 GPUs; 2 survive (1 of 2 servers lost for good)");
  EXPECT_EQ(EndedRecord(cluster.out, 1), nullptr);
  EXPECT_EQ(cluster.out.Granted(), (std::vector<int64_t>{1}));
}

TEST(ClusterSchedulerFaults, AServerThatWillRestartKeepsTheJobsThatNeedItQueued) {
  EmulatedCluster cluster(Fifo(), Servers(2, 2));
  cluster.Submit(0, 4, 3000, 0);
  cluster.StartAt(0);
  cluster.engine().ServerDown(1);
  cluster.engine().ServerNotice(1, 600);
  cluster.LoseLeaseOf(0);
  cluster.CloseRound();
  ASSERT_EQ(cluster.out.start_at, 300);
  cluster.StartAt(300);  // nothing fits on what is up: the round runs empty
  EXPECT_TRUE(cluster.out.ended.empty());
  EXPECT_TRUE(cluster.out.Granted().empty());
  cluster.CloseRound();
  cluster.engine().ServerUp(1);
  cluster.StartAt(600);
  EXPECT_EQ(cluster.out.Granted(), (std::vector<int64_t>{0, 0}));  // a part on each server
}

TEST(ClusterSchedulerFaults, AJobWhoseActorDiesWithoutARestartFailsAndTheRoundGoesOn) {
  EmulatedCluster cluster(Fifo(), Servers(1, 4));
  cluster.Submit(0, 2, 3000, 0);
  cluster.Submit(1, 1, 300, 0);
  cluster.StartAt(0);
  cluster.engine().JobDown(0, 100, "killed");
  cluster.SetDown(0, true);
  const JobRecord* dead = EndedRecord(cluster.out, 0);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->failure, "actor died at 100 s: killed");
  EXPECT_EQ(dead->wasted_gpu_s, 2 * 100);  // its lease's work up to the death
  EXPECT_EQ(cluster.out.log[cluster.out.log.size() - 1].find("stop"), std::string::npos);
  cluster.CloseRound();  // job 1 reports; job 0's report is not awaited
  EXPECT_EQ(cluster.out.rounds.size(), 1u);
  EXPECT_EQ(cluster.out.start_at, 300);
}

TEST(ClusterSchedulerFaults, ACrashedJobWaitsForItsRespawnAndResumesFromItsCheckpoint) {
  EmulatedCluster cluster(Fifo(), Servers(1, 4));
  cluster.Submit(0, 1, 3000, 0);
  cluster.StartAt(0);
  cluster.engine().FaultNotice(0, 600, "crash job 0");
  cluster.engine().JobDown(0, 100, "killed");
  cluster.SetDown(0, true);
  EXPECT_TRUE(cluster.out.ended.empty());  // it restarts
  cluster.CloseRound();
  cluster.StartAt(300);
  EXPECT_TRUE(cluster.out.Granted().empty());  // down: not runnable
  cluster.CloseRound();
  ResumePoint from;
  from.job_id = 0;
  from.iterations_left = 600;
  from.restarts = 1;
  EXPECT_EQ(cluster.engine().JobRespawned(0, from), Respawn::kResumed);
  EXPECT_EQ(cluster.engine().JobRespawned(0, from), Respawn::kRejected);  // not down any more
  cluster.SetDown(0, false);
  cluster.jobs[0].left = 600;
  cluster.Run();
  const JobRecord* r = EndedRecord(cluster.out, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->failure.empty());
  EXPECT_EQ(r->restarts, 1);
  EXPECT_EQ(r->end_s, 1200);  // rounds at 600 and 900 ran its last 600 iterations
  EXPECT_EQ(cluster.out.spawned, (std::vector<int64_t>{0}));  // its respawn came with an actor
}

TEST(ClusterSchedulerFaults, ADownJobToldItWillNotRestartFailsWithBothReasons) {
  EmulatedCluster cluster(Fifo(), Servers(1, 4));
  cluster.Submit(0, 1, 3000, 0);
  cluster.StartAt(0);
  cluster.engine().FaultNotice(0, 600, "crash job 0");
  cluster.engine().JobDown(0, 100, "killed");
  cluster.engine().FaultNotice(0, -1, "respawn failed");
  const JobRecord* r = EndedRecord(cluster.out, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->failure, "crash job 0 (respawn failed)");
}

TEST(ClusterSchedulerFaults, MissingReportsAreAskedForAgainAfterTheGrace) {
  ClusterSchedulerOptions options = Fifo();
  options.report_grace_s = 30;
  EmulatedCluster cluster(options, Servers(1, 4));
  cluster.Submit(0, 1, 3000, 0);
  cluster.Submit(1, 1, 3000, 0);
  cluster.StartAt(0);
  cluster.engine().OnRoundTimer();  // no report came
  ASSERT_TRUE(cluster.out.grace.has_value());
  EXPECT_EQ(*cluster.out.grace, std::make_pair(int64_t{0}, 30.0));
  cluster.engine().OnGrace(5);  // of another round: nothing
  EXPECT_TRUE(cluster.out.queried.empty());
  cluster.out.grace.reset();
  cluster.engine().OnGrace(0);
  EXPECT_EQ(cluster.out.queried, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(cluster.out.grace.has_value());  // and again, until they come
}

TEST(ClusterSchedulerFaults, ARestartedSchedulerRebuildsItsBooksAndResumesAtTheNextRound) {
  EmulatedCluster cluster(Fifo(), Servers(1, 4), /*keeps_failures=*/true);
  std::vector<Arrival> jobs(4);
  for (int64_t id = 0; id < 4; ++id) {
    jobs[id].spec.job_id = id;
    jobs[id].spec.model = "model";
    jobs[id].spec.iterations = 3000;
    jobs[id].has_actor = id != 2;  // job 2 was down when the scheduler restarted
    jobs[id].iter_time_s = 1;
  }
  std::vector<ResumePoint> checkpoints(2);
  checkpoints[0] = ResumePoint{0, 0, 600, true, 0, 2, 600, 0, 0, {}};     // finished
  checkpoints[1] = ResumePoint{3, 100, 900, false, 0, 3, 900, 0, 0, {}};  // 100 iterations to go
  cluster.engine().Rebuild(jobs, -1, /*failed=*/{1}, checkpoints, /*dead_for_good=*/{2});
  ASSERT_EQ(cluster.out.ended.size(), 2u);
  EXPECT_EQ(cluster.out.ended[0].job_id, 0);
  EXPECT_EQ(cluster.out.ended[0].end_s, 600);
  EXPECT_EQ(cluster.out.ended[1].job_id, 2);
  EXPECT_EQ(cluster.out.ended[1].failure,
            "crashed while the scheduler was down, without a restart");
  EXPECT_EQ(cluster.engine().Resume(1000), 1200);
  EXPECT_EQ(cluster.out.wake_at, 1200);
  EXPECT_EQ(cluster.engine().round(), 3);
  cluster.jobs[3] = EmulatedCluster::JobAccount{100, 1, 1, -1};
  cluster.StartAt(1200);
  EXPECT_EQ(cluster.out.Granted(), (std::vector<int64_t>{3}));  // 0-2 ended
  EXPECT_EQ(cluster.out.round_end->first, 4);
  cluster.CloseRound();
  const JobRecord* r = EndedRecord(cluster.out, 3);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->rounds_run, 4);
  EXPECT_EQ(r->end_s, 1500);
}

// The workload's answer to a round's arrivals can come twice (a late answer, asked again): the
// second plans nothing — no second round at the same start, no job awaited twice.
TEST(ClusterSchedulerFaults, ARoundIsPlannedOnceThoughItsArrivalsAreAnsweredTwice) {
  EmulatedCluster cluster(Fifo(), Servers(1, 4));
  cluster.Submit(0, 2, 600, 0);
  cluster.StartAt(0);
  const size_t decisions = cluster.out.log.size();
  cluster.engine().PlanRound(0);
  EXPECT_EQ(cluster.out.log.size(), decisions);
  EXPECT_EQ(cluster.engine().round(), 0);
  cluster.Run();
  const JobRecord* r = EndedRecord(cluster.out, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->end_s, 600);
  EXPECT_EQ(r->rounds_run, 2);
}

}  // namespace
}  // namespace troupe::scheduling
