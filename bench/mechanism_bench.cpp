// Micro-benchmarks of Synergy's mechanisms (scheduling/greedy.hpp, scheduling/tune.hpp): one
// round's PlaceRound over a full queue (jobs asking for twice the cluster's GPUs) at 128 to 16384
// GPUs on Synergy's 8-GPU, 24-CPU, 500 GB servers. Each job is a catalogue model drawn from a
// fixed seed (configs/models/: alexnet 12 CPUs / 125 GB per GPU, speedup 2.94, ... gnmt 1 / 20,
// 1), with its ideal demand and sensitivity matrix; sizes are single-GPU, or Synergy's multi-GPU
// mix (70% 1 GPU, 10% 2, 15% 4, 5% 8). Every round is planned from an empty ledger.
//
//   BM_TuneRound    TuneMechanism::PlaceRound (target: well under 1 ms at 512 GPUs, under 20 ms
//                   at 16384)
//   BM_GreedyRound  GreedyMechanism::PlaceRound
// Counters: queue length, jobs placed, GPUs used and the placed jobs' mean estimated speedup over
// the proportional share. Linked into troupe_engine_bench (whose file holds BENCHMARK_MAIN).
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <vector>

#include "scheduling/demand.hpp"
#include "scheduling/greedy.hpp"
#include "scheduling/tune.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {
namespace {

using scheduling::SchedJob;

std::vector<SchedJob> CatalogueQueue(int32_t cluster_gpus, bool multi_gpu) {
  const std::vector<ModelProfile>& models = ModelCatalog::BuiltIn().models();
  std::vector<std::shared_ptr<const SensitivityMatrix>> matrices;
  for (const ModelProfile& m : models) {
    matrices.push_back(std::make_shared<const SensitivityMatrix>(m.sensitivity));
  }
  std::mt19937_64 rng(1);
  std::discrete_distribution<int> mix({70, 10, 15, 5});
  std::uniform_int_distribution<size_t> pick(0, models.size() - 1);
  const int32_t sizes[] = {1, 2, 4, 8};
  std::vector<SchedJob> jobs;
  for (int64_t asked = 0; asked < 2 * cluster_gpus;) {
    const size_t m = pick(rng);
    SchedJob j;
    j.id = static_cast<int64_t>(jobs.size());
    j.arrival_s = static_cast<double>(j.id);
    j.gpus = multi_gpu ? sizes[mix(rng)] : 1;
    j.ideal_cpus_per_gpu = models[m].ideal_cpus_per_gpu;
    j.ideal_memory_gb_per_gpu = models[m].ideal_memory_gb_per_gpu;
    j.speedup_at_ideal = models[m].speedup_at_ideal;
    j.sensitivity = matrices[m];
    asked += j.gpus;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

void RunRounds(benchmark::State& state, scheduling::Mechanism& mechanism) {
  const auto gpus = static_cast<int32_t>(state.range(0));
  const bool multi_gpu = state.range(1) != 0;
  scheduling::ClusterLedger ledger(
      std::vector<scheduling::ServerShape>(gpus / 8, scheduling::ServerShape{8, 24, 500}));
  const std::vector<SchedJob> jobs = CatalogueQueue(gpus, multi_gpu);
  std::vector<const SchedJob*> queue;
  for (const SchedJob& j : jobs) queue.push_back(&j);
  std::vector<scheduling::JobPlacement> placements;
  for (auto _ : state) {
    ledger.Reset();  // every round is planned from empty
    placements = mechanism.PlaceRound(queue, ledger);
    benchmark::DoNotOptimize(placements.data());
  }
  double speedup = 0;
  for (const scheduling::JobPlacement& p : placements) {
    speedup += scheduling::PlacementThroughput(jobs[p.job_id], p);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * placements.size()));
  state.SetLabel("items = placements");
  state.counters["queue"] = static_cast<double>(queue.size());
  state.counters["placed"] = static_cast<double>(placements.size());
  state.counters["gpus_used"] = static_cast<double>(gpus - ledger.free_gpus());
  state.counters["speedup"] = placements.empty() ? 0 : speedup / placements.size();
}

void BM_TuneRound(benchmark::State& state) {
  scheduling::TuneMechanism tune;
  RunRounds(state, tune);
}
BENCHMARK(BM_TuneRound)
    ->ArgNames({"gpus", "multi"})
    ->ArgsProduct({{128, 512, 4096, 16384}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

void BM_GreedyRound(benchmark::State& state) {
  scheduling::GreedyMechanism greedy;
  RunRounds(state, greedy);
}
BENCHMARK(BM_GreedyRound)
    ->ArgNames({"gpus", "multi"})
    ->ArgsProduct({{128, 512, 4096, 16384}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace troupe
