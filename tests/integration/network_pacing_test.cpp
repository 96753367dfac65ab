// The fabric actor on the virtual clock (actors/fabric_actor.hpp): a flow's FlowDone comes when
// its bytes are through at its max-min share, re-timed whenever the flows beside it change, plus
// its route's latency. Servers 0-1 and 2-3 are two racks of a two-level tree; every NIC carries
// 1e9 bytes a second per direction (8 Gb/s), the racks' uplinks the same.
#include <gtest/gtest.h>

#include <caf/event_based_actor.hpp>
#include <chrono>
#include <map>

#include "actors/fabric_actor.hpp"
#include "runtime/actor_runtime.hpp"
#include "runtime/emulated_clock.hpp"

namespace troupe::testing {
namespace {

constexpr double kRate = 1e9;  // bytes per second, every link

// What a sender received: each flow's answer, and when it came (virtual seconds since the start).
struct Answers {
  caf::actor_clock::time_point start;
  std::map<int64_t, double> at_s;
  std::map<int64_t, double> seconds;  // as the fabric counted them
};

// Forwards to the fabric what it is handed (so the fabric sees it as the sender) and records the
// answers.
caf::behavior Sender(caf::event_based_actor* self, Answers* answers) {
  return {
      [=](const caf::actor& fabric, const FlowStart& start) { self->send(fabric, start); },
      [=](const caf::actor& fabric, const FlowStop& stop) { self->send(fabric, stop); },
      [=](const FlowDone& done) {
        answers->at_s[done.key] =
            std::chrono::duration<double>(self->clock().now() - answers->start).count();
        answers->seconds[done.key] = done.seconds;
      },
  };
}

class FabricActorTest : public ::testing::Test {
 protected:
  explicit FabricActorTest(double nic_latency_us = 0) : runtime_(RuntimeOptions{}) {
    config::Fabric f;
    f.set_servers_per_rack(2);
    f.set_server_nic_gbps(8);
    f.set_nic_latency_us(nic_latency_us);
    f.set_tor_latency_us(0);
    f.set_spine_latency_us(0);
    StatusOr<fabric::Topology> topology = fabric::Topology::Build(f, 4);
    EXPECT_TRUE(topology.ok()) << topology.status().message();
    fabric_ =
        runtime_.system().spawn(FabricActor, std::move(topology).value(), runtime_.telemetry());
    answers_.start = runtime_.system().clock().now();
    sender_ = runtime_.system().spawn(Sender, &answers_);
    other_ = runtime_.system().spawn(Sender, &other_answers_);
    other_answers_.start = answers_.start;
  }
  ~FabricActorTest() override {
    for (const caf::actor& a : {fabric_, sender_, other_}) {
      caf::anon_send_exit(a, caf::exit_reason::kill);
    }
  }
  // `sender` starts a flow of `bytes` from server `from` to `to` at virtual time at_s.
  void StartAt(const caf::actor& sender, double at_s, int64_t key, int32_t from, int32_t to,
               double bytes) {
    caf::delayed_anon_send(
        sender, SecondsToTimespan(at_s), fabric_,
        FlowStart{.key = key, .from_server = from, .to_server = to, .bytes = bytes});
  }
  void StopAt(const caf::actor& sender, double at_s, int64_t key) {
    caf::delayed_anon_send(sender, SecondsToTimespan(at_s), fabric_, FlowStop{.key = key});
  }
  // Runs every actor at each instant before the clock moves on to the next.
  void Run() {
    auto& coordinator = dynamic_cast<EmulatedCoordinator&>(runtime_.system().scheduler());
    do {
      coordinator.RunReady();
    } while (coordinator.clock().DeliverNextInstant() > 0);
  }

  ActorRuntime runtime_;
  caf::actor fabric_, sender_, other_;
  Answers answers_, other_answers_;
};

TEST_F(FabricActorTest, AFlowAloneIsThroughAfterItsBytesAtTheLinkRate) {
  StartAt(sender_, 0, 7, 0, 1, 1e6);
  Run();
  ASSERT_EQ(answers_.at_s.count(7), 1u);
  EXPECT_NEAR(answers_.at_s[7], 1e6 / kRate, 1e-9);
  EXPECT_NEAR(answers_.seconds[7], 1e6 / kRate, 1e-9);
}

TEST_F(FabricActorTest, TwoFlowsOnOneLinkEachGetHalf) {
  StartAt(sender_, 0, 1, 0, 1, 1e6);
  StartAt(other_, 0, 1, 0, 1, 1e6);  // the same key from another sender: another flow
  Run();
  EXPECT_NEAR(answers_.at_s[1], 2e6 / kRate, 1e-9);
  EXPECT_NEAR(other_answers_.at_s[1], 2e6 / kRate, 1e-9);
}

// Flows of disjoint routes (inside rack 0, inside rack 1) do not slow each other.
TEST_F(FabricActorTest, FlowsOnOtherLinksRunAtFullRate) {
  StartAt(sender_, 0, 1, 0, 1, 1e6);
  StartAt(sender_, 0, 2, 3, 2, 1e6);
  Run();
  EXPECT_NEAR(answers_.at_s[1], 1e-3, 1e-9);
  EXPECT_NEAR(answers_.at_s[2], 1e-3, 1e-9);
}

// A starts alone; B joins at 0.5 ms on A's link, so A's other half runs at half the rate (done
// at 1.5 ms); B has half its bytes through by then and finishes alone at full rate (2 ms).
TEST_F(FabricActorTest, AFlowsRemainingBytesAreRetimedWhenItsShareChanges) {
  StartAt(sender_, 0, 1, 0, 1, 1e6);
  StartAt(other_, 0.5e-3, 2, 0, 3, 1e6);  // across racks: server 0's NIC is the shared link
  Run();
  EXPECT_NEAR(answers_.at_s[1], 1.5e-3, 1e-9);
  EXPECT_NEAR(other_answers_.at_s[2], 2.0e-3, 1e-9);
  EXPECT_NEAR(other_answers_.seconds[2], 1.5e-3, 1e-9);
}

// B is withdrawn at 0.5 ms: A, a quarter through, runs its three quarters at full rate (done at
// 1.25 ms), and B is never answered.
TEST_F(FabricActorTest, AStoppedFlowIsNeverAnsweredAndGivesItsShareBack) {
  StartAt(sender_, 0, 1, 0, 1, 1e6);
  StartAt(sender_, 0, 2, 0, 1, 1e6);
  StopAt(sender_, 0.5e-3, 2);
  Run();
  EXPECT_NEAR(answers_.at_s[1], 1.25e-3, 1e-9);
  EXPECT_EQ(answers_.at_s.count(2), 0u);
}

// A flow inside one server crosses no link: through at once.
TEST_F(FabricActorTest, AFlowInsideOneServerIsThroughAtOnce) {
  StartAt(sender_, 0, 1, 2, 2, 1e9);
  Run();
  ASSERT_EQ(answers_.at_s.count(1), 1u);
  EXPECT_EQ(answers_.at_s[1], 0);
}

class FabricLatencyTest : public FabricActorTest {
 protected:
  FabricLatencyTest() : FabricActorTest(10) {}
};

// Server 0 to server 1 crosses two NIC hops of 10 us each: the answer comes 20 us after the bytes.
TEST_F(FabricLatencyTest, TheAnswerComesAfterTheRoutesLatency) {
  StartAt(sender_, 0, 1, 0, 1, 1e6);
  Run();
  EXPECT_NEAR(answers_.at_s[1], 1e-3 + 20e-6, 1e-9);
}

}  // namespace
}  // namespace troupe::testing
