// BM_OasisArrival: the decision time of one OASiS arrival (scheduling/oasis/oasis.hpp: the DP
// over end slots and workload, the per-slot greedy, the payoff), at H worker servers and H PS
// machines over T slots and 5 resources, on a cluster already holding the reservations of H
// earlier jobs. Args: machines of each kind, slots, prune (1: stop once the utility alone cannot
// beat the best payoff, the default; 0: examine every end slot, the algorithm as the seed states
// it). The timed call is Evaluate() (the whole decision, nothing committed), cycling through 64
// fresh jobs arriving in slot 0, so every iteration sees the same prices; epochs_x multiplies
// their epochs (10: ten times the work W_i, the DP's size).
// BM_OasisStream: OnArrival() for a stream of 400 jobs spread over the horizon, admissions and
// repricing included; the reported time is per arrival.
//
// Machines: workers 8 GPUs, 48 CPUs, 256 GB, 2 TB, 40 Gbps; PS 0 GPUs, 48 CPUs, 256 GB, 2 TB,
// 100 Gbps; one-hour slots. Jobs (fixed seed): E 10-50, N 10-100, M 50-200, tau 0.2-2 s,
// gradients 0.1-1 Gb; workers 1-4 GPUs, 2-8 CPUs, 8-32 GB, 20-100 GB, 1-5 Gbps; PS 2-8 CPUs,
// 8-32 GB, 20-100 GB, 5-20 Gbps; sigmoid utility, g1 1-100, g2 4-6, g3 1-15. Prices from
// EstimatePrices over the jobs. Counters: work (mean W_i, worker-slots), examined (mean end slots
// examined), admit (fraction of the timed jobs the decision would admit), preloaded (admitted of
// the H preloaded jobs).
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>
#include <vector>

#include "scheduling/oasis/oasis.hpp"

namespace troupe {
namespace {

using scheduling::oasis::Cluster;
using scheduling::oasis::Decision;
using scheduling::oasis::EstimatePrices;
using scheduling::oasis::Job;
using scheduling::oasis::Machine;
using scheduling::oasis::OasisScheduler;
using scheduling::oasis::UtilityKind;

Cluster BenchCluster(int machines, int slots) {
  Cluster c;
  c.workers.assign(machines, Machine{{8, 48, 256, 2000, 40}});
  c.ps.assign(machines, Machine{{0, 48, 256, 2000, 100}});
  c.slots = slots;
  c.slot_s = 3600;
  return c;
}

Job BenchJob(std::mt19937& rng, int id, int arrival, int epochs_x = 1) {
  auto real = [&](double lo, double hi) { return std::uniform_real_distribution<>(lo, hi)(rng); };
  auto integer = [&](int lo, int hi) { return std::uniform_int_distribution<>(lo, hi)(rng); };
  Job j;
  j.id = id;
  j.arrival = arrival;
  j.epochs = integer(10, 50) * epochs_x;
  j.chunks = integer(10, 100);
  j.minibatches_per_chunk = integer(50, 200);
  j.minibatch_s = real(0.2, 2);
  j.gradient = real(0.1, 1);
  j.worker = {double(integer(1, 4)), double(integer(2, 8)), real(8, 32), real(20, 100), real(1, 5)};
  j.ps = {0, double(integer(2, 8)), real(8, 32), real(20, 100), real(5, 20)};
  j.utility = {UtilityKind::kSigmoid, real(1, 100), real(4, 6), real(1, 15)};
  return j;
}

void BM_OasisArrival(benchmark::State& state) {
  const int machines = static_cast<int>(state.range(0));
  const int slots = static_cast<int>(state.range(1));
  const Cluster cluster = BenchCluster(machines, slots);
  std::mt19937 rng(42);
  std::vector<Job> preload, timed;
  for (int i = 0; i < machines; ++i) preload.push_back(BenchJob(rng, i, 0));
  const int epochs_x = static_cast<int>(state.range(3));
  for (int i = 0; i < 64; ++i) timed.push_back(BenchJob(rng, machines + i, 0, epochs_x));
  std::vector<Job> all = preload;
  all.insert(all.end(), timed.begin(), timed.end());
  OasisScheduler scheduler(cluster, EstimatePrices(cluster, all), {.prune = state.range(2) != 0});
  for (const Job& job : preload) scheduler.OnArrival(job);
  double work = 0, examined = 0, admitted = 0;
  size_t i = 0;
  for (auto _ : state) {
    const Job& job = timed[i++ % timed.size()];
    Decision d = scheduler.Evaluate(job);
    benchmark::DoNotOptimize(d);
    work += job.WorkerSlots(cluster.slot_s);
    examined += d.end_slots_examined;
    admitted += d.admitted;
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["work"] = work / n;
  state.counters["examined"] = examined / n;
  state.counters["admit"] = admitted / n;
  state.counters["preloaded"] = scheduler.admitted();
}

void BM_OasisStream(benchmark::State& state) {
  const int machines = static_cast<int>(state.range(0));
  const int slots = static_cast<int>(state.range(1));
  const Cluster cluster = BenchCluster(machines, slots);
  std::mt19937 rng(7);
  std::vector<Job> jobs;
  for (int i = 0; i < 400; ++i) jobs.push_back(BenchJob(rng, i, i * slots / 400));
  const auto params = EstimatePrices(cluster, jobs);
  double admitted = 0;
  for (auto _ : state) {
    OasisScheduler scheduler(cluster, params);
    const auto start = std::chrono::steady_clock::now();
    for (const Job& job : jobs) benchmark::DoNotOptimize(scheduler.OnArrival(job));
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(elapsed.count() / static_cast<double>(jobs.size()));
    admitted = scheduler.admitted();
  }
  state.counters["admitted"] = admitted;
}

BENCHMARK(BM_OasisArrival)
    ->ArgNames({"machines", "slots", "prune", "epochs_x"})
    ->Args({100, 300, 1, 1})
    ->Args({100, 300, 0, 1})
    ->Args({100, 50, 0, 1})
    ->Args({100, 100, 0, 1})
    ->Args({100, 600, 0, 1})
    ->Args({20, 300, 0, 1})
    ->Args({50, 300, 0, 1})
    ->Args({200, 300, 0, 1})
    ->Args({100, 50, 1, 1})
    ->Args({100, 100, 1, 1})
    ->Args({100, 600, 1, 1})
    ->Args({20, 300, 1, 1})
    ->Args({50, 300, 1, 1})
    ->Args({200, 300, 1, 1})
    ->Args({100, 300, 1, 10})
    ->Args({100, 300, 0, 10})
    ->Args({1000, 1000, 1, 1})
    ->Args({1000, 1000, 0, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OasisStream)
    ->ArgNames({"machines", "slots"})
    ->Args({100, 300})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace troupe
