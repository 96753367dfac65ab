// The server actor on the virtual clock: it grants GPU indices, refuses — to the job and, with the
// reason, to the scheduler — a lease that would overcommit it, drops a round's leases when the
// next round's arrive, and resizes and releases leases on request.
#include "actors/server_actor.hpp"

#include <gtest/gtest.h>

#include <caf/event_based_actor.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "runtime/actor_runtime.hpp"

namespace troupe::testing {
namespace {

// Everything a probe actor received; the emulated runtime is single-threaded, so the test reads
// it between steps.
struct Inbox {
  std::vector<LeaseGrant> grants;
  std::vector<LeaseRefusal> refusals;
  std::vector<ServerFree> frees;
  std::vector<std::string> errors;
};

// Records what it receives; asked to, it sends a request to a server and records the answer.
caf::behavior Probe(caf::event_based_actor* self, Inbox* inbox) {
  auto ask = [=](const server_actor& server, auto request) {
    self->request(server, caf::infinite, request)
        .then([=](const ServerFree& f) { inbox->frees.push_back(f); },
              [=](caf::error& e) { inbox->errors.push_back(self->system().render(e)); });
  };
  return {[=](const LeaseGrant& g) { inbox->grants.push_back(g); },
          [=](const LeaseRefusal& r) { inbox->refusals.push_back(r); },
          [=](const server_actor& server, const LeaseResize& r) { ask(server, r); },
          [=](const server_actor& server, const LeaseRelease& r) { ask(server, r); }};
}

class ServerActorTest : public ::testing::Test {
 protected:
  ServerActorTest() : runtime_(RuntimeOptions{}) {
    server_ = runtime_.system().spawn(ServerActor, ServerSpec{0, "s0", 8, 24, 500, {}},
                                      runtime_.telemetry());
    job_ = runtime_.system().spawn(Probe, &job_inbox_);
    scheduler_ = runtime_.system().spawn(Probe, &scheduler_inbox_);
  }
  ~ServerActorTest() override {
    caf::anon_send_exit(server_, caf::exit_reason::kill);
    for (auto& a : {job_, scheduler_}) caf::anon_send_exit(a, caf::exit_reason::kill);
  }
  void Step() {
    auto& coordinator =
        dynamic_cast<caf::scheduler::test_coordinator&>(runtime_.system().scheduler());
    coordinator.run();
  }
  // Sends `leases` as if from the scheduler probe.
  void SendRound(int64_t round, std::vector<LeaseOrder> leases,
                 std::vector<StandingPart> standing = {}) {
    caf::send_as(scheduler_, server_,
                 RoundLeases{round, round * 300.0, round * 300.0 + 300, std::move(leases),
                             std::move(standing)});
    Step();
  }
  LeaseOrder Order(int64_t job, int32_t gpus, double cpus, double memory) {
    return LeaseOrder{.job = caf::actor_cast<job_actor>(job_),  // the probe stands in for a job
                      .terms = {.job_id = job, .gpus = gpus, .cpus = cpus, .memory_gb = memory}};
  }

  ActorRuntime runtime_;
  Inbox job_inbox_, scheduler_inbox_;
  server_actor server_;
  caf::actor job_, scheduler_;
};

TEST_F(ServerActorTest, GrantsLowestFreeGpuIndices) {
  SendRound(0, {Order(1, 2, 6, 125), Order(2, 4, 12, 250)});
  ASSERT_EQ(job_inbox_.grants.size(), 2u);
  EXPECT_EQ(job_inbox_.grants[0].gpu_ids, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(job_inbox_.grants[1].gpu_ids, (std::vector<int32_t>{2, 3, 4, 5}));
  EXPECT_TRUE(job_inbox_.grants[1].granted);
  EXPECT_TRUE(scheduler_inbox_.refusals.empty());
}

TEST_F(ServerActorTest, RefusesAnOvercommittingLeaseToJobAndScheduler) {
  SendRound(0, {Order(1, 4, 20, 100), Order(2, 2, 6, 100)});  // 26 CPUs > 24
  ASSERT_EQ(job_inbox_.grants.size(), 2u);
  EXPECT_TRUE(job_inbox_.grants[0].granted);
  EXPECT_FALSE(job_inbox_.grants[1].granted);
  ASSERT_EQ(scheduler_inbox_.refusals.size(), 1u);
  EXPECT_EQ(scheduler_inbox_.refusals[0].job_id, 2);
  EXPECT_NE(scheduler_inbox_.refusals[0].reason.find("CPUs"), std::string::npos);
}

TEST_F(ServerActorTest, NextRoundsLeasesReplaceThePreviousOnes) {
  SendRound(0, {Order(1, 8, 24, 500)});
  SendRound(1, {Order(2, 8, 24, 500)});  // would overcommit if round 0's lease were still held
  ASSERT_EQ(job_inbox_.grants.size(), 2u);
  EXPECT_TRUE(job_inbox_.grants[1].granted);
  EXPECT_TRUE(scheduler_inbox_.refusals.empty());
}

TEST_F(ServerActorTest, AStandingLeaseKeepsItsGpusWithoutAGrant) {
  SendRound(0, {Order(1, 4, 12, 250), Order(2, 4, 12, 250)});
  LeaseOrder after_standing = Order(3, 4, 12, 250);
  after_standing.terms.rounds_stood = 2;
  SendRound(1, {after_standing}, {{1, 4, 12, 250}});  // job 2's lease ended; job 1's stands
  ASSERT_EQ(job_inbox_.grants.size(), 3u);            // none for job 1 in round 1
  const LeaseGrant& grant = job_inbox_.grants[2];
  EXPECT_TRUE(grant.granted);
  EXPECT_EQ(grant.gpu_ids, (std::vector<int32_t>{4, 5, 6, 7}));  // job 1 still holds 0-3
  EXPECT_EQ(grant.rounds_stood, 2);
  SendRound(2, {Order(4, 8, 24, 500)}, {{1, 4, 12, 250}});  // job 1 still holds 4: no room for 8
  ASSERT_EQ(job_inbox_.grants.size(), 4u);
  EXPECT_FALSE(job_inbox_.grants[3].granted);
  ASSERT_EQ(scheduler_inbox_.refusals.size(), 1u);
  EXPECT_NE(scheduler_inbox_.refusals[0].reason.find("GPUs"), std::string::npos);
}

TEST_F(ServerActorTest, AStandingPartNewHereIsBookedWithoutAGrant) {
  SendRound(0, {Order(1, 2, 6, 100)});
  SendRound(1, {}, {{1, 4, 12, 200}, {2, 2, 6, 100}});  // job 1 grew here; job 2 moved here
  EXPECT_EQ(job_inbox_.grants.size(), 1u);              // round 0's only
  SendRound(2, {Order(3, 2, 6, 100)}, {{1, 4, 12, 200}, {2, 2, 6, 100}});
  ASSERT_EQ(job_inbox_.grants.size(), 2u);
  EXPECT_TRUE(job_inbox_.grants[1].granted);  // the 2 GPUs the standing parts left
  SendRound(3, {Order(4, 1, 1, 1)}, {{1, 4, 12, 200}, {2, 2, 6, 100}, {3, 2, 6, 100}});
  ASSERT_EQ(job_inbox_.grants.size(), 3u);
  EXPECT_FALSE(job_inbox_.grants[2].granted);  // all 8 held by the standing parts
  EXPECT_EQ(scheduler_inbox_.refusals.size(), 1u);
}

TEST_F(ServerActorTest, ResizesAndReleasesOnRequest) {
  SendRound(0, {Order(1, 4, 12, 250)});
  caf::anon_send(scheduler_, server_, LeaseResize{1, 20, 250});
  Step();
  ASSERT_EQ(scheduler_inbox_.frees.size(), 1u);
  EXPECT_DOUBLE_EQ(scheduler_inbox_.frees[0].cpus, 4);
  caf::anon_send(scheduler_, server_, LeaseResize{1, 30, 250});  // 30 > 24 CPUs
  Step();
  ASSERT_EQ(scheduler_inbox_.errors.size(), 1u);
  caf::anon_send(scheduler_, server_, LeaseRelease{1});
  Step();
  ASSERT_EQ(scheduler_inbox_.frees.size(), 2u);
  EXPECT_EQ(scheduler_inbox_.frees[1].gpus, 8);
  EXPECT_DOUBLE_EQ(scheduler_inbox_.frees[1].cpus, 24);
}

}  // namespace
}  // namespace troupe::testing
