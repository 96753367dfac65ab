// Micro-benchmarks of the emulation engine and of the GPU-proportional mechanism.
//
//   BM_EmulatedTimedEvents   N actors on an emulated ActorRuntime, each re-arming a delayed
//                            message to itself with TellAt; driven by ActorRuntime::Drive, the
//                            loop a real run uses (run ready messages, jump to the next timer).
//   BM_PlainCafSend          the same actors and message count with a plain self->send and no
//                            delay, on the same test coordinator and the same Drive: the ceiling
//                            that the virtual clock's bookkeeping is measured against.
//   BM_PlainCafSendThreaded  plain sends on CAF's default work-stealing scheduler, for scale.
//   BM_ProportionalRound     ProportionalMechanism::PlaceRound over a full queue (twice the
//                            cluster's GPUs asked for) at 128 to 16384 GPUs on 8-GPU servers,
//                            single-GPU jobs and Synergy's multi-GPU mix.
// Every benchmark reports items_processed (events, messages or placements), so Google Benchmark
// prints items/s. scripts/bench.sh runs these and records them in docs/performance.md.
#include <benchmark/benchmark.h>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <random>
#include <vector>

#include "runtime/actor_runtime.hpp"
#include "runtime/counted_send.hpp"
#include "scheduling/proportional.hpp"

namespace troupe {
namespace {

using bench_go_atom = caf::atom_constant<caf::atom("bench_go")>;
using bench_tick_atom = caf::atom_constant<caf::atom("bench_tick")>;
using bench_done_atom = caf::atom_constant<caf::atom("bench_done")>;

constexpr int kActors = 1000;
constexpr int64_t kTicksPerActor = 100;  // 100,000 ticks a benchmark iteration
constexpr double kTickPeriodS = 1;       // virtual seconds between one actor's ticks

struct TickerState {
  int64_t left = 0;
  caf::actor report_to;  // threaded mode: told when this actor's ticks are done
};

// Ticks kTicksPerActor times, each tick a TellAt one virtual second ahead.
caf::behavior TimedTicker(caf::stateful_actor<TickerState>* self, Telemetry* telemetry,
                          const RunClock* clock) {
  auto arm = [=] {
    const double at_s = clock->Seconds(self->clock().now()) + kTickPeriodS;
    TellAt(self, telemetry, *clock, self, at_s, bench_tick_atom::value);
  };
  return {
      [=](bench_go_atom, int64_t ticks) {
        self->state.left = ticks;
        arm();
      },
      [=](bench_tick_atom) {
        if (--self->state.left > 0) arm();
      },
  };
}

// The same load with an undelayed plain send: no clock, no counters.
caf::behavior PlainTicker(caf::stateful_actor<TickerState>* self) {
  return {
      [=](bench_go_atom, int64_t ticks, const caf::actor& report_to) {
        self->state.left = ticks;
        self->state.report_to = report_to;
        self->send(self, bench_tick_atom::value);
      },
      [=](bench_tick_atom) {
        if (--self->state.left > 0) {
          self->send(self, bench_tick_atom::value);
        } else if (self->state.report_to) {
          self->send(self->state.report_to, bench_done_atom::value);
        }
      },
  };
}

void KillAll(const std::vector<caf::actor>& actors) {
  for (const caf::actor& a : actors) caf::anon_send_exit(a, caf::exit_reason::kill);
}

void SetEventCounters(benchmark::State& state, int64_t per_iteration) {
  state.SetItemsProcessed(state.iterations() * per_iteration);
  state.counters["events"] = benchmark::Counter(static_cast<double>(per_iteration),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_EmulatedTimedEvents(benchmark::State& state) {
  ActorRuntime runtime(RuntimeOptions{});
  std::vector<caf::actor> actors;
  for (int i = 0; i < kActors; ++i) {
    actors.push_back(runtime.system().spawn(TimedTicker, runtime.telemetry(), &runtime.clock()));
  }
  const int64_t per_iteration = kActors * kTicksPerActor;
  for (auto _ : state) {
    const uint64_t before = runtime.telemetry()->timed_events.load();
    for (const caf::actor& a : actors) caf::anon_send(a, bench_go_atom::value, kTicksPerActor);
    runtime.Drive(nullptr);  // returns once no message and no timer is left
    if (runtime.telemetry()->timed_events.load() - before != static_cast<uint64_t>(per_iteration)) {
      state.SkipWithError("not every timed event was delivered");
      break;
    }
  }
  SetEventCounters(state, per_iteration);
  state.counters["virtual_s"] = runtime.clock().Seconds(runtime.system().clock().now());
  KillAll(actors);
}
BENCHMARK(BM_EmulatedTimedEvents)->Unit(benchmark::kMillisecond);

void BM_PlainCafSend(benchmark::State& state) {
  ActorRuntime runtime(RuntimeOptions{});
  std::vector<caf::actor> actors;
  for (int i = 0; i < kActors; ++i) actors.push_back(runtime.system().spawn(PlainTicker));
  for (auto _ : state) {
    for (const caf::actor& a : actors) {
      caf::anon_send(a, bench_go_atom::value, kTicksPerActor, caf::actor{});
    }
    runtime.Drive(nullptr);
  }
  SetEventCounters(state, kActors * kTicksPerActor);
  KillAll(actors);
}
BENCHMARK(BM_PlainCafSend)->Unit(benchmark::kMillisecond);

void BM_PlainCafSendThreaded(benchmark::State& state) {
  RuntimeOptions options;
  options.emulated = false;
  ActorRuntime runtime(options);
  std::vector<caf::actor> actors;
  for (int i = 0; i < kActors; ++i) actors.push_back(runtime.system().spawn(PlainTicker));
  {
    caf::scoped_actor waiter{runtime.system()};
    for (auto _ : state) {
      for (const caf::actor& a : actors) {
        caf::anon_send(a, bench_go_atom::value, kTicksPerActor,
                       caf::actor_cast<caf::actor>(waiter));
      }
      int done = 0;
      waiter->receive_for(done, kActors)([](bench_done_atom) {});
    }
  }
  SetEventCounters(state, kActors * kTicksPerActor);
  KillAll(actors);
}
BENCHMARK(BM_PlainCafSendThreaded)->Unit(benchmark::kMillisecond)->UseRealTime();

// A queue asking for twice the cluster's GPUs: single-GPU jobs, or Synergy's synthetic multi-GPU
// mix (70% 1 GPU, 10% 2, 15% 4, 5% 8) drawn from a fixed seed.
std::vector<scheduling::SchedJob> FullQueue(int32_t cluster_gpus, bool multi_gpu) {
  std::mt19937_64 rng(1);
  std::discrete_distribution<int> mix({70, 10, 15, 5});
  const int32_t sizes[] = {1, 2, 4, 8};
  std::vector<scheduling::SchedJob> jobs;
  for (int64_t asked = 0; asked < 2 * cluster_gpus;) {
    scheduling::SchedJob j;
    j.id = static_cast<int64_t>(jobs.size());
    j.arrival_s = static_cast<double>(j.id);
    j.gpus = multi_gpu ? sizes[mix(rng)] : 1;
    asked += j.gpus;
    jobs.push_back(j);
  }
  return jobs;
}

void BM_ProportionalRound(benchmark::State& state) {
  const auto gpus = static_cast<int32_t>(state.range(0));
  const bool multi_gpu = state.range(1) != 0;
  scheduling::ClusterLedger ledger(
      std::vector<scheduling::ServerShape>(gpus / 8, scheduling::ServerShape{8, 24, 500}));
  const std::vector<scheduling::SchedJob> jobs = FullQueue(gpus, multi_gpu);
  std::vector<const scheduling::SchedJob*> queue;
  for (const scheduling::SchedJob& j : jobs) queue.push_back(&j);
  scheduling::ProportionalMechanism mechanism;
  size_t placed = 0;
  for (auto _ : state) {
    ledger.Reset();  // every round is planned from empty
    std::vector<scheduling::JobPlacement> placements = mechanism.PlaceRound(queue, ledger);
    placed = placements.size();
    benchmark::DoNotOptimize(placements.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * placed));
  state.SetLabel("items = placements");
  state.counters["queue"] = static_cast<double>(queue.size());
  state.counters["placed"] = static_cast<double>(placed);
  state.counters["gpus_used"] = static_cast<double>(gpus - ledger.free_gpus());
}
BENCHMARK(BM_ProportionalRound)
    ->ArgNames({"gpus", "multi"})
    ->ArgsProduct({{128, 512, 4096, 16384}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace troupe

BENCHMARK_MAIN();
