// Micro-benchmark of topology-aware placement (scheduling/rack_placement.hpp, config
// fabric.placement): one round's PlaceRound over a full queue (jobs asking for twice the
// cluster's GPUs) on Synergy's 8-GPU servers in racks of 8 (64 GPUs a rack), with Philly-like
// sizes that span servers (40% 1 GPU, 15% 2, 15% 4, 15% 8, 10% 16, 5% 32), at 512 and 16,384
// GPUs, for proportional and TUNE, oblivious against consolidate. Every round is planned from an
// empty ledger. Counters: jobs placed, placements spanning servers, and the mean racks a
// spanning placement crosses.
//
//   BM_PlacementRound/gpus/mechanism/consolidate   mechanism 0: proportional, 1: TUNE
// Linked into troupe_engine_bench (whose file holds BENCHMARK_MAIN).
#include <benchmark/benchmark.h>

#include <memory>
#include <random>
#include <set>
#include <vector>

#include "scheduling/mechanism_registry.hpp"
#include "scheduling/rack_placement.hpp"

namespace troupe {
namespace {

using scheduling::SchedJob;

std::vector<SchedJob> SpanningQueue(int32_t cluster_gpus) {
  std::mt19937_64 rng(1);
  std::discrete_distribution<int> mix({40, 15, 15, 15, 10, 5});
  const int32_t sizes[] = {1, 2, 4, 8, 16, 32};
  std::vector<SchedJob> jobs;
  for (int64_t asked = 0; asked < 2 * cluster_gpus;) {
    SchedJob j;
    j.id = static_cast<int64_t>(jobs.size());
    j.arrival_s = static_cast<double>(j.id);
    j.gpus = sizes[mix(rng)];
    j.iterations_total = j.iterations_left = 1000;
    j.iter_time_s = 1;
    asked += j.gpus;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

void BM_PlacementRound(benchmark::State& state) {
  const auto gpus = static_cast<int32_t>(state.range(0));
  const bool tune = state.range(1) != 0;
  const bool consolidate = state.range(2) != 0;
  const std::vector<scheduling::ServerShape> servers(gpus / 8, scheduling::ServerShape{8, 24, 500});
  scheduling::ClusterLedger ledger(servers);
  std::vector<int32_t> rack_of_server(servers.size());
  for (size_t s = 0; s < servers.size(); ++s) rack_of_server[s] = static_cast<int32_t>(s / 8);
  const auto racks = std::make_shared<const scheduling::RackLayout>(
      scheduling::RackLayout::Make(rack_of_server, servers, 0));
  if (consolidate) ledger.SetRacks(racks);
  const std::unique_ptr<scheduling::Mechanism> mechanism =
      scheduling::MakeMechanism(tune ? "tune" : "proportional");
  const std::vector<SchedJob> jobs = SpanningQueue(gpus);
  std::vector<const SchedJob*> queue;
  for (const SchedJob& j : jobs) queue.push_back(&j);
  std::vector<scheduling::JobPlacement> placements;
  for (auto _ : state) {
    ledger.Reset();  // every round is planned from empty
    placements = mechanism->PlaceRound(queue, ledger);
    benchmark::DoNotOptimize(placements.data());
  }
  double spanning = 0, racks_crossed = 0;
  for (const scheduling::JobPlacement& p : placements) {
    if (p.parts.size() < 2) continue;
    std::set<int32_t> crossed;
    for (const scheduling::PlacementPart& part : p.parts) {
      crossed.insert(racks->rack_of_server[part.server]);
    }
    spanning += 1;
    racks_crossed += static_cast<double>(crossed.size());
  }
  state.counters["placed"] = static_cast<double>(placements.size());
  state.counters["spanning"] = spanning;
  state.counters["racks_per_spanning"] = spanning > 0 ? racks_crossed / spanning : 0;
}
BENCHMARK(BM_PlacementRound)
    ->ArgNames({"gpus", "tune", "consolidate"})
    ->ArgsProduct({{512, 16384}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace troupe
