// The emulated runtime's own virtual clock and coordinator (runtime/emulated_clock.hpp): events
// come by due time and, at equal times, in the order they were scheduled; request timeouts fire
// unless the answer came first; and a random mix of timed and plain messages, some scheduled
// while an instant is being delivered, comes out exactly as on CAF's test clock.
#include "runtime/emulated_clock.hpp"

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/delegated.hpp>
#include <caf/event_based_actor.hpp>
#include <chrono>
#include <random>
#include <utility>
#include <vector>

#include "runtime/actor_runtime.hpp"

namespace troupe::testing {
namespace {

using std::chrono::seconds;
using clock_ask_atom = caf::atom_constant<caf::atom("clock_ask")>;

// What a recorder received: a value and the virtual time (ns) it came at.
using Log = std::vector<std::pair<int, int64_t>>;

int64_t NowNs(caf::event_based_actor* self) {
  return self->clock().now().time_since_epoch().count();
}

// Logs every value; a value divisible by 7 (below 10000) schedules value + 10000 to itself
// 0-2 s later, so some events are added to the instant being delivered.
caf::behavior Recorder(caf::event_based_actor* self, Log* log) {
  return {[=](int value) {
    log->emplace_back(value, NowNs(self));
    if (value % 7 == 0 && value >= 0 && value < 10000) {
      self->delayed_send(self, seconds(value % 3), value + 10000);
    }
  }};
}

// Schedules `count` values to `recorder`, each with a delay of 0-3 s drawn from `seed`, and
// every fifth one also sent at once (negated).
void ScheduleMix(caf::actor_system& system, const caf::actor& recorder, int count, unsigned seed) {
  system.spawn([=](caf::event_based_actor* self) {
    std::mt19937 rng(seed);
    for (int i = 0; i < count; ++i) {
      self->delayed_send(recorder, seconds(rng() % 4), i);
      if (i % 5 == 0) self->send(recorder, -i);
    }
  });
}

TEST(EmulatedClock, EqualTimesComeInTheOrderTheyWereScheduled) {
  ActorRuntime runtime{RuntimeOptions{}};
  Log log;
  caf::actor recorder = runtime.system().spawn(Recorder, &log);
  runtime.system().spawn([=](caf::event_based_actor* self) {
    const int delays_s[] = {2, 1, 2, 1, 0, 2};
    for (int i = 0; i < 6; ++i) self->delayed_send(recorder, seconds(delays_s[i]), i + 1);
  });
  EXPECT_FALSE(runtime.Drive(nullptr));  // goes quiet: nothing ends the "run"
  std::vector<int> order;
  for (const auto& [value, at_ns] : log) order.push_back(value);
  EXPECT_EQ(order, (std::vector<int>{5, 2, 4, 1, 3, 6}));
  ASSERT_EQ(log.size(), 6u);
  EXPECT_EQ(log[1].second - log[0].second, 1'000'000'000);
  EXPECT_EQ(log[5].second - log[0].second, 2'000'000'000);
}

// Asks a silent actor (times out after 2 s) and an answering one (its 5 s timeout is cancelled).
caf::behavior Asker(caf::event_based_actor* self, Log* log, caf::actor silent, caf::actor answers) {
  self->request(silent, seconds(2), clock_ask_atom::value)
      .then([=](int) { log->emplace_back(1, NowNs(self)); },
            [=](const caf::error&) { log->emplace_back(-1, NowNs(self)); });
  self->request(answers, seconds(5), clock_ask_atom::value)
      .then([=](int value) { log->emplace_back(value, NowNs(self)); },
            [=](const caf::error&) { log->emplace_back(-2, NowNs(self)); });
  return {[](int) {}};
}

TEST(EmulatedClock, RequestTimeoutsFireUnlessAnswered) {
  ActorRuntime runtime{RuntimeOptions{}};
  Log log;
  caf::actor silent = runtime.system().spawn(
      []() -> caf::behavior { return {[](clock_ask_atom) { return caf::delegated<int>{}; }}; });
  caf::actor answers =
      runtime.system().spawn([]() -> caf::behavior { return {[](clock_ask_atom) { return 2; }}; });
  runtime.system().spawn(Asker, &log, silent, answers);
  runtime.Drive(nullptr);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].first, 2);   // the answer, at once
  EXPECT_EQ(log[1].first, -1);  // the silent one's timeout, 2 s later; the 5 s one never fires
  EXPECT_EQ(log[1].second - log[0].second, 2'000'000'000);
}

// The same mix on CAF's own test coordinator and clock, driven as troupe drove it before.
Log RunOnCafTestClock(int count, unsigned seed) {
  caf::actor_system_config config;
  config.set("scheduler.policy", caf::atom("testing"));
  caf::actor_system system{config};
  auto& coordinator = dynamic_cast<caf::scheduler::test_coordinator&>(system.scheduler());
  Log log;
  ScheduleMix(system, system.spawn(Recorder, &log), count, seed);
  do {
    coordinator.run();
    if (!coordinator.trigger_timeout()) break;
    coordinator.advance_time(caf::timespan{0});
  } while (true);
  return log;
}

TEST(EmulatedClock, DeliversExactlyAsCafsTestClock) {
  for (unsigned seed : {1u, 2u, 3u}) {
    ActorRuntime runtime{RuntimeOptions{}};
    Log log;
    ScheduleMix(runtime.system(), runtime.system().spawn(Recorder, &log), 500, seed);
    runtime.Drive(nullptr);
    const Log reference = RunOnCafTestClock(500, seed);
    EXPECT_GT(log.size(), 600u);
    EXPECT_EQ(log, reference) << "seed " << seed;
  }
}

}  // namespace
}  // namespace troupe::testing
