// BM_OptRound: one OptMechanism round (scheduling/opt.hpp: Synergy-OPT's LP 1 and LP 2 with
// GLPK) over a full queue at 128, 512, 4,096 and 16,384 GPUs on Synergy's 8-GPU, 24-CPU, 500 GB
// servers. The queue asks for twice the cluster's GPUs in Synergy's multi-GPU mix (70% 1 GPU,
// 10% 2, 15% 4, 5% 8), each job one of the catalogue's ten models (configs/models/
// synergy_sensitivity.csv), drawn from a fixed seed. One iteration a size: the big sizes take
// seconds to minutes, which is the point: Synergy calls OPT impractical, and this says where.
//
// Counters: placed jobs, servers, the bound (LP 1), LP 2's
// optimum (mapped), the leased total (placed_total), the proportional total on the same jobs,
// fragmented, fractional (mixed by LP 2) and reset jobs, fell_back (1: fell back to proportional),
// and TUNE's estimated total on the same round (tune_total; 0 without TUNE).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "scheduling/mechanism_registry.hpp"
#include "scheduling/opt.hpp"

namespace troupe {
namespace {

using Catalogue = std::vector<std::shared_ptr<const SensitivityMatrix>>;

// The catalogue's matrices, read from the CSV next to this source tree; empty if it is missing.
Catalogue LoadCatalogue() {
  const std::filesystem::path csv = std::filesystem::path(__FILE__).parent_path().parent_path() /
                                    "configs/models/synergy_sensitivity.csv";
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  std::map<std::string, std::map<std::pair<double, double>, double>> points;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string model, cpus, memory, value;
    if (!std::getline(row, model, ',') || !std::getline(row, cpus, ',') ||
        !std::getline(row, memory, ',') || !std::getline(row, value)) {
      continue;
    }
    points[model][{std::stod(cpus), std::stod(memory)}] = std::stod(value);
  }
  Catalogue catalogue;
  for (const auto& [model, grid] : points) {
    SensitivityMatrix w;
    for (const auto& [point, value] : grid) {
      if (w.cpu_grid.empty() || w.cpu_grid.back() != point.first) w.cpu_grid.push_back(point.first);
      if (w.cpu_grid.size() == 1) w.memory_grid.push_back(point.second);
      w.values.push_back(value);
    }
    if (w.values.size() == w.cpu_grid.size() * w.memory_grid.size()) {
      catalogue.push_back(std::make_shared<const SensitivityMatrix>(std::move(w)));
    }
  }
  return catalogue;
}

std::vector<scheduling::SchedJob> FullQueue(int32_t cluster_gpus, const Catalogue& catalogue) {
  std::mt19937_64 rng(1);
  std::discrete_distribution<int> mix({70, 10, 15, 5});
  const int32_t sizes[] = {1, 2, 4, 8};
  std::vector<scheduling::SchedJob> jobs;
  for (int64_t asked = 0; asked < 2 * cluster_gpus;) {
    scheduling::SchedJob j;
    j.id = static_cast<int64_t>(jobs.size());
    j.arrival_s = static_cast<double>(j.id);
    j.gpus = sizes[mix(rng)];
    j.sensitivity = catalogue[rng() % catalogue.size()];
    // The ideal demand (what TUNE asks for): the fastest point, fewest CPUs and memory first.
    const SensitivityMatrix& w = *j.sensitivity;
    const size_t best = std::max_element(w.values.begin(), w.values.end()) - w.values.begin();
    j.ideal_cpus_per_gpu = w.cpu_grid[best / w.memory_grid.size()];
    j.ideal_memory_gb_per_gpu = w.memory_grid[best % w.memory_grid.size()];
    j.speedup_at_ideal = w.values[best];
    asked += j.gpus;
    jobs.push_back(j);
  }
  return jobs;
}

// TUNE's estimated total on the same round, for comparison (0 where this build has no TUNE).
double TuneTotal(const std::vector<const scheduling::SchedJob*>& queue,
                 scheduling::ClusterLedger ledger) {
  if (scheduling::FindMechanism("tune") == nullptr) return 0;
  std::unique_ptr<scheduling::Mechanism> tune = scheduling::MakeMechanism("tune");
  ledger.Reset();
  std::map<int64_t, const scheduling::SchedJob*> by_id;
  for (const scheduling::SchedJob* j : queue) by_id[j->id] = j;
  double total = 0;
  for (const scheduling::JobPlacement& p : tune->PlaceRound(queue, ledger)) {
    total += by_id.at(p.job_id)->sensitivity->At(p.cpus() / p.gpus(), p.memory_gb() / p.gpus());
  }
  return total;
}

void BM_OptRound(benchmark::State& state) {
  const Catalogue catalogue = LoadCatalogue();
  if (catalogue.empty()) {
    state.SkipWithError("configs/models/synergy_sensitivity.csv not found");
    return;
  }
  const auto gpus = static_cast<int32_t>(state.range(0));
  scheduling::ClusterLedger ledger(
      std::vector<scheduling::ServerShape>(gpus / 8, scheduling::ServerShape{8, 24, 500}));
  const std::vector<scheduling::SchedJob> jobs = FullQueue(gpus, catalogue);
  std::vector<const scheduling::SchedJob*> queue;
  for (const scheduling::SchedJob& j : jobs) queue.push_back(&j);
  scheduling::OptMechanism opt;
  size_t placed = 0;
  for (auto _ : state) {
    ledger.Reset();  // every round is planned from empty
    std::vector<scheduling::JobPlacement> placements = opt.PlaceRound(queue, ledger);
    placed = placements.size();
    benchmark::DoNotOptimize(placements.data());
  }
  double proportional = 0;
  for (const scheduling::OptJobOutcome& job : opt.last_jobs()) proportional += job.fair_value;
  state.counters["tune_total"] = TuneTotal(queue, ledger);
  state.counters["placed"] = static_cast<double>(placed);
  state.counters["servers"] = static_cast<double>(ledger.server_count());
  state.counters["bound"] = opt.last_objective();
  state.counters["mapped"] = opt.last_mapped_objective();
  state.counters["placed_total"] = opt.last_placed_objective();
  state.counters["reset"] = opt.last_reset_jobs();
  state.counters["proportional"] = proportional;
  state.counters["fragmented"] = opt.last_fragmented_jobs();
  state.counters["fractional"] = opt.last_fractional_jobs();
  state.counters["fell_back"] = opt.last_fell_back() ? 1 : 0;
}
BENCHMARK(BM_OptRound)
    ->ArgName("gpus")
    ->Arg(128)
    ->Arg(512)
    ->Arg(4096)
    ->Arg(16384)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace troupe
