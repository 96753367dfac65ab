// SimulatePhased (fabric/phased.hpp) on a two-level tree of 8 racks of 8 servers (100 Gb/s NICs,
// 4:1 rack uplinks): N data-parallel jobs, each a ring over 4 servers drawn at random (4 flows,
// 2 or 4 links each), of assorted compute times, gradient sizes and start offsets, run for M
// iterations each; bursts_per_s is the bursts simulated per second. Run as
//   build/bench/troupe_phased_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "fabric/phased.hpp"

namespace troupe::fabric {
namespace {

constexpr int32_t kRacks = 8;
constexpr int32_t kServersPerRack = 8;
constexpr int32_t kServers = kRacks * kServersPerRack;
constexpr double kNicBytesPerS = 12.5e9;                                  // 100 Gb/s
constexpr double kUplinkBytesPerS = kServersPerRack * kNicBytesPerS / 4;  // 4:1

// Links: server up [0, S), server down [S, 2S), rack up [2S, 2S + R), rack down after.
std::vector<double> Capacities() {
  std::vector<double> capacities(2 * kServers, kNicBytesPerS);
  capacities.resize(2 * kServers + 2 * kRacks, kUplinkBytesPerS);
  return capacities;
}

std::vector<int32_t> Route(int32_t from, int32_t to) {
  const int32_t from_rack = from / kServersPerRack;
  const int32_t to_rack = to / kServersPerRack;
  if (from_rack == to_rack) return {from, kServers + to};
  return {from, 2 * kServers + from_rack, 2 * kServers + kRacks + to_rack, kServers + to};
}

std::vector<PhasedJob> Jobs(int32_t count) {
  uint64_t state = 42;
  auto draw = [&state] {  // a fixed LCG: the same jobs on every run
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
  };
  std::vector<PhasedJob> jobs(count);
  for (PhasedJob& job : jobs) {
    job.compute_s = 0.05 + 0.3 * draw();
    job.offset_s = draw();
    job.latency_s = 1e-5;
    job.bytes_per_flow = (0.2 + draw()) * 1e9;
    std::vector<int32_t> servers;
    for (int i = 0; i < 4; ++i) servers.push_back(static_cast<int32_t>(draw() * kServers));
    for (int i = 0; i < 4; ++i) {
      const int32_t from = servers[i], to = servers[(i + 1) % 4];
      if (from != to) job.flow_links.push_back(Route(from, to));
    }
  }
  return jobs;
}

void BM_PhasedJobsIterations(benchmark::State& state) {
  const std::vector<double> capacities = Capacities();
  const std::vector<PhasedJob> jobs = Jobs(static_cast<int32_t>(state.range(0)));
  const PhasedOptions options{.horizon_s = 0,
                              .max_iterations = static_cast<int32_t>(state.range(1))};
  double sum = 0;
  for (auto _ : state) {
    const std::vector<double> comm_s = SimulatePhased(capacities, jobs, options);
    sum += comm_s[0];
    benchmark::DoNotOptimize(sum);
  }
  state.counters["bursts"] = static_cast<double>(state.range(0) * state.range(1));
  state.counters["bursts_per_s"] =
      benchmark::Counter(static_cast<double>(state.range(0) * state.range(1)),
                         benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PhasedJobsIterations)
    ->Args({50, 64})
    ->Args({200, 64})
    ->Args({50, 640})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace troupe::fabric

BENCHMARK_MAIN();
