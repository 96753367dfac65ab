// Max-min sharing on a large fabric (fabric/flow_sharing.hpp): 16,384 GPUs as 2,048 servers of 8,
// 16 servers a rack at 4:1 oversubscription, 16 racks under each of 8 spines under a core; 10,000
// concurrent flows, the hierarchical ring all-reduce flows of random multi-server jobs (2 to 16
// servers each, fixed seed).
//
//   BM_FabricReshareOneChange  one job's flow removed and one added, then Update: the incremental
//                              re-share a lease start or end costs (items = flows recomputed).
//   BM_FabricShareFromScratch  a new FlowSharing over the same 10,000 flows, then Update.
//
// Argument 0 places each job's servers anywhere in the cluster ("scattered": one component spans
// nearly every flow, so an Update recomputes them all); 1 keeps each job inside one rack
// ("rack-local": a change reaches its rack's flows only). docs/performance.md records the figures.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <utility>
#include <vector>

#include "fabric/collective.hpp"
#include "fabric/flow_sharing.hpp"
#include "fabric/topology.hpp"

namespace troupe::fabric {
namespace {

constexpr int32_t kServers = 2048;
constexpr int32_t kServersPerRack = 16;
constexpr size_t kFlows = 10000;

Topology ThreeLevelTree() {
  config::Fabric fabric;
  fabric.set_servers_per_rack(kServersPerRack);
  fabric.set_racks_per_spine(16);
  fabric.set_tor_oversubscription(4);
  StatusOr<Topology> topology = Topology::Build(fabric, kServers);
  if (!topology.ok()) std::abort();
  return std::move(*topology);
}

// Each flow's links: the ring flows of random jobs until there are kFlows.
std::vector<std::vector<int32_t>> JobFlows(const Topology& topology, bool rack_local,
                                           uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> size(2, 16), server(0, kServers - 1);
  std::vector<std::vector<int32_t>> flows;
  std::vector<int32_t> servers(kServers);
  for (int32_t s = 0; s < kServers; ++s) servers[static_cast<size_t>(s)] = s;
  while (flows.size() < kFlows) {
    auto k = static_cast<size_t>(size(rng));
    std::vector<JobPart> parts;
    if (rack_local) {
      int32_t rack_first = server(rng) / kServersPerRack * kServersPerRack;
      std::shuffle(servers.begin() + rack_first, servers.begin() + rack_first + kServersPerRack,
                   rng);
      for (size_t i = 0; i < k; ++i) parts.push_back({servers[rack_first + i], 2});
    } else {
      for (size_t i = 0; i < k; ++i) {  // a partial shuffle: k distinct servers
        std::swap(servers[i], servers[i + rng() % (kServers - i)]);
        parts.push_back({servers[i], 2});
      }
    }
    CollectiveTraffic traffic = AllReduceTraffic(parts, 1e9, Collective::kHierarchicalRing);
    for (auto [from, to] : traffic.flows) {
      if (flows.size() == kFlows) break;
      flows.emplace_back();
      topology.Route(from, to, &flows.back());
    }
  }
  return flows;
}

void BM_FabricReshareOneChange(benchmark::State& state) {
  const bool rack_local = state.range(0) != 0;
  const Topology topology = ThreeLevelTree();
  const std::vector<std::vector<int32_t>> flows = JobFlows(topology, rack_local, 45);
  FlowSharing sharing(topology.Capacities());
  std::vector<FlowId> ids;
  for (const auto& links : flows) ids.push_back(sharing.Add(links));
  sharing.Update();
  std::mt19937_64 rng(7);
  size_t recomputed = 0;
  for (auto _ : state) {
    // A flow ends and another (the same route, for a steady flow count) starts.
    size_t i = rng() % ids.size();
    sharing.Remove(ids[i]);
    ids[i] = sharing.Add(flows[i]);
    sharing.Update();
    recomputed += sharing.last_update_flows();
    benchmark::DoNotOptimize(sharing.Rate(ids[i]));
  }
  state.SetItemsProcessed(static_cast<int64_t>(recomputed));
  state.counters["flows"] = static_cast<double>(sharing.flows());
  state.counters["recomputed"] =
      static_cast<double>(recomputed) / static_cast<double>(state.iterations());
  state.SetLabel(rack_local ? "rack-local" : "scattered");
}

void BM_FabricShareFromScratch(benchmark::State& state) {
  const bool rack_local = state.range(0) != 0;
  const Topology topology = ThreeLevelTree();
  const std::vector<std::vector<int32_t>> flows = JobFlows(topology, rack_local, 45);
  const std::vector<double> capacities = topology.Capacities();
  for (auto _ : state) {
    FlowSharing sharing(capacities);
    for (const auto& links : flows) sharing.Add(links);
    sharing.Update();
    benchmark::DoNotOptimize(sharing.Rate(0));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * flows.size()));
  state.counters["flows"] = static_cast<double>(flows.size());
  state.SetLabel(rack_local ? "rack-local" : "scattered");
}

BENCHMARK(BM_FabricReshareOneChange)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FabricShareFromScratch)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace troupe::fabric

BENCHMARK_MAIN();
