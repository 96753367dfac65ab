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

#include "config/config.pb.h"
#include "fabric/topology.hpp"
#include "scheduling/fabric_round.hpp"
#include "scheduling/interleave_scorer.hpp"
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

// fabric.placement interleave (scheduling/interleave_placement.hpp): the same round, every job
// tracked with a gradient and an iteration time of the model catalogue's range (so spreads meet
// traffic they must be scored against), on a 4:1 fabric of 100 Gb/s NICs, up to 8 candidate
// spreads scored per job. Against BM_PlacementRound/.../tune:0/consolidate:1: what scoring costs.
void BM_InterleaveRound(benchmark::State& state) {
  const auto gpus = static_cast<int32_t>(state.range(0));
  const std::vector<scheduling::ServerShape> servers(gpus / 8, scheduling::ServerShape{8, 24, 500});
  config::Fabric spec;
  spec.set_servers_per_rack(8);
  spec.set_server_nic_gbps(100);
  spec.set_tor_oversubscription(4);
  auto model = std::make_shared<scheduling::FabricModel>();
  model->topology = fabric::Topology::Build(spec, static_cast<int32_t>(servers.size())).value();
  model->traffic = scheduling::TrafficModel::kPhased;
  model->interleave_candidates = 8;
  scheduling::FabricRound fabric(model);
  scheduling::ClusterLedger ledger(servers);
  std::vector<int32_t> rack_of_server(servers.size());
  for (size_t s = 0; s < servers.size(); ++s) rack_of_server[s] = static_cast<int32_t>(s / 8);
  ledger.SetRacks(std::make_shared<const scheduling::RackLayout>(
      scheduling::RackLayout::Make(rack_of_server, servers, 0)));
  ledger.SetSpreadScorer(std::make_shared<scheduling::InterleaveScorer>(fabric, 8));
  const std::unique_ptr<scheduling::Mechanism> mechanism =
      scheduling::MakeMechanism("proportional");
  std::vector<SchedJob> jobs = SpanningQueue(gpus);
  const double gradient_mb[] = {244, 47, 102, 14, 643, 768, 56, 346};
  const double compute_s[] = {0.6, 0.64, 0.78, 0.71, 0.12, 0.67, 0.011, 0.757};
  for (SchedJob& j : jobs) {
    j.iter_time_s = compute_s[j.id % 8];
    fabric.Track(j.id, scheduling::JobTraffic{gradient_mb[j.id % 8] * 1e6, 0});
  }
  std::vector<const SchedJob*> queue;
  for (const SchedJob& j : jobs) queue.push_back(&j);
  std::vector<scheduling::JobPlacement> placements;
  for (auto _ : state) {
    ledger.Reset();  // every round is planned from empty; the scorer forgets its noted jobs
    placements = mechanism->PlaceRound(queue, ledger);
    benchmark::DoNotOptimize(placements.data());
  }
  double spanning = 0;
  for (const scheduling::JobPlacement& p : placements) spanning += p.parts.size() > 1;
  state.counters["placed"] = static_cast<double>(placements.size());
  state.counters["spanning"] = spanning;
}
BENCHMARK(BM_InterleaveRound)->ArgName("gpus")->Arg(512)->Arg(16384)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace troupe
