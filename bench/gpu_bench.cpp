// troupe_gpu_bench: the device backends' micro-benchmarks (gpu/). The CPU references always run;
// the CUDA/NCCL ones are registered only where a GPU answers (main says why otherwise). The CUDA
// figures time device-resident batches with CUDA events or a synchronising host clock inside gpu/
// (Measure* functions), so each runs one iteration and reports counters: scripts/gpu-check.sh
// turns them into its table.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <iostream>
#include <vector>

#include "gpu/collective_backend.hpp"
#include "gpu/compute_backend.hpp"
#include "gpu/cuda/device_hash_shard.hpp"
#include "gpu/devices.hpp"
#include "gpu/embedding.hpp"
#include "paramserver/hbm_table.hpp"

namespace troupe::gpu {
namespace {

constexpr size_t kHashKeys = size_t{1} << 21;  // 2 M keys: 50% of a 4 M-slot GPU shard

paramserver::HbmConfig HashConfig() {
  paramserver::HbmConfig config;
  config.layout = {.dim = 1, .optimizer_floats = 0};
  config.optimizer.kind = paramserver::OptimizerKind::kSgd;
  config.bytes_per_gpu = 2 * kHashKeys * paramserver::CpuHbmTable::RowCost(config.layout);
  return config;
}

paramserver::RowBatch HashBatch() {
  paramserver::RowBatch batch;
  batch.keys.resize(kHashKeys);
  for (size_t i = 0; i < kHashKeys; ++i) batch.keys[i] = (i + 1) * 0x9E3779B97F4A7C15ull;
  batch.values.assign(kHashKeys, 1.0f);
  return batch;
}

// The CPU reference HBM-PS table (paramserver::CpuHbmTable): one batch of 2 M keys into an
// empty table, then the same keys looked up.
void BM_CpuHbmInsert(benchmark::State& state) {
  const paramserver::RowBatch batch = HashBatch();
  for (auto _ : state) {
    state.PauseTiming();
    auto table = paramserver::CpuHbmTable::Create(HashConfig());
    if (!table.ok()) return state.SkipWithError(table.status().message().c_str());
    state.ResumeTiming();
    benchmark::DoNotOptimize((*table)->Insert(batch));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kHashKeys));
}
BENCHMARK(BM_CpuHbmInsert)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_CpuHbmFind(benchmark::State& state) {
  const paramserver::RowBatch batch = HashBatch();
  auto table = paramserver::CpuHbmTable::Create(HashConfig());
  if (!table.ok()) return state.SkipWithError(table.status().message().c_str());
  if (!(*table)->Insert(batch).ok()) return state.SkipWithError("Insert failed");
  paramserver::RowBatch out;
  for (auto _ : state) benchmark::DoNotOptimize((*table)->Get(batch.keys, &out));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kHashKeys));
}
BENCHMARK(BM_CpuHbmFind)->Unit(benchmark::kMillisecond)->Iterations(5);

// Embedding bags on the CPU: 1 M rows of 32 floats, 64 K bags of 26 (Criteo's fields).
struct EmbeddingCase {
  std::vector<float> table;
  EmbeddingBags bags;
  int32_t dim = 32;
  EmbeddingCase() {
    const size_t rows = size_t{1} << 20, bags_n = size_t{1} << 16, pool = 26;
    table.resize(rows * dim);
    for (size_t i = 0; i < table.size(); ++i) table[i] = SeededValue(1, 0, i);
    bags.offsets.resize(bags_n + 1);
    for (size_t b = 0; b <= bags_n; ++b) bags.offsets[b] = static_cast<int32_t>(b * pool);
    bags.indices.resize(bags_n * pool);
    for (size_t i = 0; i < bags.indices.size(); ++i) {
      bags.indices[i] = static_cast<int32_t>((SeededValue(1, 1, i) + 1) / 2 * rows) % rows;
    }
  }
  // Bytes a pass moves: indices, one row read per index (and written back, backward), pooled.
  double Bytes(bool backward) const {
    const double rows_moved = static_cast<double>(bags.indices.size()) * dim * sizeof(float);
    return static_cast<double>(bags.indices.size()) * sizeof(int32_t) +
           (backward ? 2 : 1) * rows_moved + static_cast<double>(bags.bags()) * dim * sizeof(float);
  }
};

void BM_CpuEmbedding(benchmark::State& state) {
  const bool backward = state.range(0) == 1;
  const EmbeddingCase c;
  std::unique_ptr<EmbeddingBackend> cpu = MakeCpuEmbedding();
  std::vector<float> pooled(c.bags.bags() * c.dim, 1.0f), grad(c.table.size(), 0.0f);
  for (auto _ : state) {
    const Status s = backward ? cpu->Backward(pooled, c.dim, c.bags, &grad)
                              : cpu->Forward(c.table, c.dim, c.dim, c.bags, &pooled);
    if (!s.ok()) state.SkipWithError(s.message().c_str());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.Bytes(backward)));
}
BENCHMARK(BM_CpuEmbedding)->Arg(0)->Arg(1)->ArgName("backward")->Unit(benchmark::kMillisecond);

// One training step of res50 on the given backend, 1 device; `leases` fresh leases of `steps`
// steps each: step_ms is the median, spread_pct (max - min) / median of the per-lease medians.
void RunLeases(benchmark::State& state, ComputeBackend& backend, const StepSizing& sizing,
               int leases, int steps) {
  StepPlan plan;
  if (Status s = PlanStep(*ModelCatalog::BuiltIn().Find("res50"), sizing, &plan); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  std::vector<double> lease_medians;
  for (auto _ : state) {
    lease_medians.clear();
    for (int l = 0; l < leases; ++l) {
      if (Status s = backend.Lease(plan, 1, 1 + l); !s.ok()) {
        state.SkipWithError(s.message().c_str());
        return;
      }
      std::vector<double> times;
      StepTiming timing;
      for (int i = -1; i < steps; ++i) {  // i == -1: warm-up
        if (Status s = backend.RunStep(&timing); !s.ok()) {
          state.SkipWithError(s.message().c_str());
          return;
        }
        if (i >= 0) times.push_back(timing.seconds);
      }
      std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
      lease_medians.push_back(times[times.size() / 2]);
      backend.Release();
    }
  }
  std::sort(lease_medians.begin(), lease_medians.end());
  const double median = lease_medians[lease_medians.size() / 2];
  state.counters["step_ms"] = median * 1e3;
  state.counters["spread_pct"] = 100 * (lease_medians.back() - lease_medians.front()) / median;
  state.counters["gflops"] = plan.flops() / median / 1e9;
}

void BM_CpuComputeLeases(benchmark::State& state) {
  StepSizing sizing;
  sizing.scale = 1e-5;  // ~0.1 GFLOP: a few tens of ms on one core
  sizing.width = 256;
  std::unique_ptr<ComputeBackend> cpu = MakeCpuComputeBackend();
  RunLeases(state, *cpu, sizing, 5, 5);
}
BENCHMARK(BM_CpuComputeLeases)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_CpuAllReduce(benchmark::State& state) {
  std::vector<std::vector<float>> buffers(4, std::vector<float>(size_t{1} << 22, 1.0f));
  std::unique_ptr<CollectiveBackend> cpu = MakeCpuCollective();
  double seconds = 0;
  for (auto _ : state) {
    if (Status s = cpu->AllReduceSum(&buffers, &seconds); !s.ok()) {
      state.SkipWithError(s.message().c_str());
    }
  }
  state.SetBytesProcessed(state.iterations() * 4 * static_cast<int64_t>(buffers[0].size()) * 4);
}
BENCHMARK(BM_CpuAllReduce)->Unit(benchmark::kMillisecond);

// ---- CUDA and NCCL: registered in main only where a GPU answers.

void BM_CudaHash(benchmark::State& state) {
  HashMeasurement m;
  for (auto _ : state) {
    if (Status s = MeasureHashShard(kHashKeys, 5, &m); !s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.counters["insert_Gkeys_s"] = m.insert_keys_per_s / 1e9;
  state.counters["find_Gkeys_s"] = m.find_keys_per_s / 1e9;
  state.counters["load"] = m.load;
}

void BM_CudaEmbedding(benchmark::State& state) {
  EmbeddingMeasurement m;
  for (auto _ : state) {
    // 8 M rows of 64 floats (2 GiB), 256 K bags of 26: far beyond the L2 cache.
    if (Status s = MeasureEmbeddingBandwidth(int64_t{1} << 23, 64, int64_t{1} << 18, 26, 10, &m);
        !s.ok()) {
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.counters["fwd_pct_peak"] = 100 * m.forward_fraction;
  state.counters["bwd_pct_peak"] = 100 * m.backward_fraction;
  state.counters["fwd_GB_s"] = m.forward_bytes_per_s / 1e9;
  state.counters["bwd_GB_s"] = m.backward_bytes_per_s / 1e9;
  state.counters["peak_GB_s"] = m.peak_bytes_per_s / 1e9;
}

void BM_CudaComputeLeases(benchmark::State& state) {
  std::unique_ptr<ComputeBackend> cuda;
  if (Status s = MakeComputeBackend("cuda", &cuda); !s.ok()) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  RunLeases(state, *cuda, StepSizing{}, 10, 20);
}

void BM_NcclAllReduce(benchmark::State& state) {
  AllReduceMeasurement m;
  for (auto _ : state) {
    if (Status s = MeasureNcclAllReduce(size_t{1} << 26, 1, 20, &m); !s.ok()) {  // 256 MiB
      state.SkipWithError(s.message().c_str());
      return;
    }
  }
  state.counters["allreduce_ms"] = m.seconds * 1e3;
  state.counters["bus_GB_s"] = m.bus_bytes_per_s / 1e9;
}

}  // namespace
}  // namespace troupe::gpu

int main(int argc, char** argv) {
  using namespace troupe::gpu;
  const DeviceReport report = ListDevices();
  const bool have_gpu = std::any_of(report.devices.begin(), report.devices.end(),
                                    [](const DeviceInfo& d) { return d.kind == "cuda"; });
  if (have_gpu) {
    benchmark::RegisterBenchmark("BM_CudaHash", BM_CudaHash)->Iterations(1);
    benchmark::RegisterBenchmark("BM_CudaEmbedding", BM_CudaEmbedding)->Iterations(1);
    benchmark::RegisterBenchmark("BM_CudaComputeLeases", BM_CudaComputeLeases)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
    if (report.built_with_nccl) {
      benchmark::RegisterBenchmark("BM_NcclAllReduce", BM_NcclAllReduce)->Iterations(1);
    }
  } else {
    std::cerr << "troupe_gpu_bench: no GPU, CUDA/NCCL benchmarks not run ("
              << (report.cuda_status.empty() ? "no CUDA device listed" : report.cuda_status)
              << ")\n";
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
