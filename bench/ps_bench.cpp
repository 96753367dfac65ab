// MEM-PS and HBM-PS (CPU) micro-benchmarks.
//
// Workload: 1 M parameters (ValueLayout 8 + 8 floats, 64-byte rows), keys drawn Zipf 0.99 (YCSB's
// skew) by rank, each rank scrambled into a 64-bit key; batches of 4,096 references,
// deduplicated first as the pipeline does (a batch fetches each key once). 512 pre-drawn batches
// are cycled; every benchmark warms up over all of them before timing.
//
//   BM_MemCacheFetchUpdate     MemCache over an InMemoryBackingStore holding every row: Fetch a
//                              batch, bump each row, Update it back (so evictions write back).
//                              Arguments: the eviction window K (1 = plain LRU) and the budget in
//                              percent of the rows (20; 100 leaves only the hit path's
//                              bookkeeping). Counter hit_rate.
//   BM_FlatMapFetchUpdate      the same lookups and copies on one bare absl::flat_hash_map of
//                              key -> row slot holding every row: the cost floor MemCache's
//                              bookkeeping (recency, frequency, misses, evictions) is measured
//                              against.
//   BM_MemCacheFetch / BM_FlatMapFetch   the fetch half alone.
//   BM_HbmGet / BM_HbmAccumulate   CpuHbmTable, 1 node x 8 GPUs, every key of the batches
//                              inserted: Get of embeddings, Adagrad Accumulate of gradients.
//   BM_DedupPartition          Deduper + PartitionByNode (4 nodes) of the raw 4,096 references.
// items_per_second is keys/s (deduplicated keys; raw references for BM_DedupPartition).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "paramserver/backing_store.hpp"
#include "paramserver/hbm_table.hpp"
#include "paramserver/mem_cache.hpp"
#include "paramserver/partitioner.hpp"
#include "paramserver/zipf.hpp"

namespace troupe::paramserver {
namespace {

constexpr uint64_t kParams = 1'000'000;
constexpr size_t kBatch = 4096;
constexpr size_t kBatches = 512;
constexpr ValueLayout kLayout{8, 8};

Key KeyOfRank(uint64_t rank) { return (rank + 1) * 0x9E3779B97F4A7C15ull; }  // a bijection

struct Workload {
  std::vector<std::vector<Key>> raw;     // 4,096 references each
  std::vector<std::vector<Key>> unique;  // deduplicated
  size_t unique_keys = 0;
};

const Workload& GetWorkload() {
  static const Workload w = [] {
    Workload out;
    ZipfSampler zipf(kParams, 0.99, 20261129);
    Deduper deduper;
    Dedup dedup;
    for (size_t b = 0; b < kBatches; ++b) {
      std::vector<Key> keys(kBatch);
      for (Key& k : keys) k = KeyOfRank(zipf.Next());
      deduper.Into(keys, &dedup);
      out.unique_keys += dedup.unique.size();
      out.raw.push_back(std::move(keys));
      out.unique.push_back(dedup.unique);
    }
    return out;
  }();
  return w;
}

void InitRow(Key key, std::span<float> row) { row[0] = static_cast<float>(key % 97) * 1e-3f; }

// Stands in for training: a small change to every row's first embedding float.
void Bump(RowBatch& rows) {
  for (size_t i = 0; i < rows.size(); ++i) rows.values[i * kLayout.floats()] += 1e-3f;
}

// Runs `one_batch(b)` over every batch once (warm-up), then timed; sets items per second.
template <typename Fn>
void RunBatches(benchmark::State& state, Fn one_batch) {
  const Workload& w = GetWorkload();
  for (size_t b = 0; b < kBatches; ++b) one_batch(b);
  size_t b = 0;
  int64_t keys = 0;
  for (auto _ : state) {
    keys += static_cast<int64_t>(w.unique[b].size());
    one_batch(b);
    b = (b + 1) % kBatches;
  }
  state.SetItemsProcessed(keys);
}

// A store holding every row and a cache in front of it; `status` says why not if it failed.
struct CacheSetup {
  std::unique_ptr<InMemoryBackingStore> store;
  std::unique_ptr<MemCache> cache;
  Status status;

  CacheSetup(int32_t window, int64_t budget_percent) {
    auto made = InMemoryBackingStore::Create(kLayout, InitRow);
    if (!made.ok()) {
      status = made.status();
      return;
    }
    store = std::move(*made);
    auto cached = MemCache::Create(
        MemCacheConfig{kLayout, kParams * budget_percent / 100 * MemCache::RowCost(kLayout),
                       window},
        store.get());
    if (!cached.ok()) {
      status = cached.status();
      return;
    }
    cache = std::move(*cached);
    RowBatch all;
    for (uint64_t r = 0; r < kParams; ++r) all.keys.push_back(KeyOfRank(r));
    all.values.assign(kParams * kLayout.floats(), 0.5f);
    status = store->Store(all);
  }
};

void MemCacheBench(benchmark::State& state, bool update) {
  CacheSetup setup(static_cast<int32_t>(state.range(0)), state.range(1));
  if (!setup.status.ok()) return state.SkipWithError(setup.status.message().c_str());
  const Workload& w = GetWorkload();
  RowBatch out;
  FetchStats stats;
  size_t hits = 0;
  size_t lookups = 0;
  RunBatches(state, [&](size_t b) {
    if (!setup.cache->Fetch(w.unique[b], &out, &stats).ok()) state.SkipWithError("Fetch failed");
    hits += stats.hits;
    lookups += stats.keys;
    if (!update) return;
    Bump(out);
    if (!setup.cache->Update(out).ok()) state.SkipWithError("Update failed");
  });
  state.counters["hit_rate"] = static_cast<double>(hits) / static_cast<double>(lookups);
}

void BM_MemCacheFetchUpdate(benchmark::State& state) { MemCacheBench(state, true); }
void BM_MemCacheFetch(benchmark::State& state) { MemCacheBench(state, false); }

// Every row in one flat_hash_map -> arena slot.
struct FlatMapSetup {
  size_t width = static_cast<size_t>(kLayout.floats());
  absl::flat_hash_map<Key, uint32_t> index;
  std::vector<float> arena;

  FlatMapSetup() : arena(kParams * width, 0.5f) {
    index.reserve(kParams);
    for (uint64_t r = 0; r < kParams; ++r) index.emplace(KeyOfRank(r), static_cast<uint32_t>(r));
  }
};

void FlatMapBench(benchmark::State& state, bool update) {
  FlatMapSetup m;
  const Workload& w = GetWorkload();
  RowBatch out;
  RunBatches(state, [&](size_t b) {
    const std::vector<Key>& keys = w.unique[b];
    out.keys.assign(keys.begin(), keys.end());
    out.values.resize(keys.size() * m.width);
    for (size_t i = 0; i < keys.size(); ++i) {
      const auto it = m.index.find(keys[i]);
      std::copy_n(m.arena.data() + it->second * m.width, m.width, out.values.data() + i * m.width);
    }
    if (!update) return;
    Bump(out);
    for (size_t i = 0; i < keys.size(); ++i) {
      const auto it = m.index.find(keys[i]);
      std::copy_n(out.values.data() + i * m.width, m.width, m.arena.data() + it->second * m.width);
    }
  });
}

void BM_FlatMapFetchUpdate(benchmark::State& state) { FlatMapBench(state, true); }
void BM_FlatMapFetch(benchmark::State& state) { FlatMapBench(state, false); }

// Every row of the workload inserted, or null (the benchmark is skipped with the reason).
std::unique_ptr<CpuHbmTable> MakeHbm(benchmark::State& state) {
  HbmConfig config;
  config.layout = kLayout;
  config.nodes = 1;
  config.gpus_per_node = 8;
  config.bytes_per_gpu = kParams * CpuHbmTable::RowCost(kLayout);
  StatusOr<std::unique_ptr<CpuHbmTable>> table = CpuHbmTable::Create(config);
  if (!table.ok()) {
    state.SkipWithError(table.status().message().c_str());
    return nullptr;
  }
  const Workload& w = GetWorkload();
  RowBatch rows;
  for (const auto& keys : w.unique) {
    rows.keys = keys;
    rows.values.assign(keys.size() * kLayout.floats(), 0.5f);
    if (!(*table)->Insert(rows).ok()) {
      state.SkipWithError("Insert failed");
      return nullptr;
    }
  }
  return std::move(*table);
}

void BM_HbmGet(benchmark::State& state) {
  const std::unique_ptr<CpuHbmTable> hbm = MakeHbm(state);
  if (!hbm) return;
  CpuHbmTable& table = *hbm;
  const Workload& w = GetWorkload();
  RowBatch out;
  RunBatches(state, [&](size_t b) {
    benchmark::DoNotOptimize(table.Get(w.unique[b], &out, RowPart::kEmbedding));
  });
}

void BM_HbmAccumulate(benchmark::State& state) {
  const std::unique_ptr<CpuHbmTable> hbm = MakeHbm(state);
  if (!hbm) return;
  CpuHbmTable& table = *hbm;
  const Workload& w = GetWorkload();
  const std::vector<float> gradients(kBatch * kLayout.dim, 1e-2f);
  RunBatches(state, [&](size_t b) {
    const std::vector<Key>& keys = w.unique[b];
    benchmark::DoNotOptimize(
        table.Accumulate(keys, std::span<const float>(gradients).first(keys.size() * kLayout.dim)));
  });
}

void BM_DedupPartition(benchmark::State& state) {
  const Workload& w = GetWorkload();
  Deduper deduper;
  Dedup dedup;
  Partition partition;
  size_t b = 0;
  for (auto _ : state) {
    deduper.Into(w.raw[b], &dedup);
    if (!PartitionByNodeInto(dedup.unique, 4, &partition).ok()) state.SkipWithError("partition");
    benchmark::DoNotOptimize(partition.keys.data());
    b = (b + 1) % kBatches;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}

BENCHMARK(BM_MemCacheFetchUpdate)
    ->ArgNames({"window", "budget_pct"})
    ->Args({8, 20})
    ->Args({1, 20})
    ->Args({8, 100})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FlatMapFetchUpdate)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MemCacheFetch)
    ->ArgNames({"window", "budget_pct"})
    ->Args({8, 20})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FlatMapFetch)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HbmGet)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HbmAccumulate)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DedupPartition)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace troupe::paramserver
