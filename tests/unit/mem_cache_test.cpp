// MEM-PS's cache (paramserver/mem_cache.hpp) over an InMemoryBackingStore (backing_store.hpp).
//
// Contract checked here: on a crafted sequence the LRU + LFU policy ("least frequently used of
// the K least recently used, ties to the least recent, survivors' frequencies halved") evicts in
// the order worked out by hand, and K = 1 is plain LRU; a Fetch loads its distinct misses in one
// Load and stores its evicted dirty rows in one Store (clean rows are dropped); per-batch stats
// count hits as keys resident at the call; a budget below one row caches nothing and writes
// through; Load errors (and a store returning the wrong rows) fail one call, Store errors are
// sticky and keep the unstored rows. Seeded random Fetch/Update/Flush sequences return exactly
// what a std::unordered_map model holds and never exceed the byte budget.
#include "paramserver/mem_cache.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

#include "tests/unit/must.hpp"

namespace troupe::paramserver {
namespace {

constexpr ValueLayout kLayout{2, 2};

// A never-stored key's row: (k, -k, 0, 0).
void InitRow(Key k, std::span<float> row) {
  row[0] = static_cast<float>(k);
  row[1] = -static_cast<float>(k);
}

std::unique_ptr<InMemoryBackingStore> NewStore(InMemoryBackingStore::RowInit init = InitRow) {
  return Must(InMemoryBackingStore::Create(kLayout, std::move(init)));
}

MemCacheConfig Config(size_t rows, int32_t window) {
  return MemCacheConfig{kLayout, rows * MemCache::RowCost(kLayout), window};
}

void FetchOne(MemCache& cache, Key key) {
  RowBatch out;
  ASSERT_TRUE(cache.Fetch(std::vector<Key>{key}, &out).ok());
}

RowBatch Rows(const std::vector<Key>& keys, float value) {
  RowBatch b;
  b.keys = keys;
  b.values.assign(keys.size() * kLayout.floats(), value);
  return b;
}

TEST(MemCacheTest, LeastFrequentOfTheKLeastRecentIsEvicted) {
  const auto store_owned = NewStore();
  InMemoryBackingStore& store = *store_owned;
  const auto cache_owned = Must(MemCache::Create(Config(4, 3), &store));
  MemCache& cache = *cache_owned;
  for (Key k : {1, 1, 1, 2, 3, 4}) FetchOne(cache, k);  // a=1 three times: frequency 3
  EXPECT_EQ(cache.KeysByRecency(), (std::vector<Key>{4, 3, 2, 1}));
  EXPECT_EQ(cache.Frequency(1), 3u);
  // Window {1:3, 2:1, 3:1}: 2 and 3 tie at 1, 2 is older. 1 and 3 age to 1 and 0.
  FetchOne(cache, 5);
  EXPECT_EQ(cache.KeysByRecency(), (std::vector<Key>{5, 4, 3, 1}));
  EXPECT_EQ(cache.Frequency(1), 1u);
  EXPECT_EQ(cache.Frequency(3), 0u);
  // Window {1:1, 3:0, 4:1}: 3 goes; 1 and 4 age to 0.
  FetchOne(cache, 6);
  EXPECT_EQ(cache.KeysByRecency(), (std::vector<Key>{6, 5, 4, 1}));
  // Window {1:0, 4:0, 5:1}: 1 and 4 tie, 1 is older: the once-hot key goes at last.
  FetchOne(cache, 7);
  EXPECT_EQ(cache.KeysByRecency(), (std::vector<Key>{7, 6, 5, 4}));
}

TEST(MemCacheTest, WindowOfOneIsPlainLru) {
  const auto store_owned = NewStore();
  InMemoryBackingStore& store = *store_owned;
  const auto cache_owned = Must(MemCache::Create(Config(4, 1), &store));
  MemCache& cache = *cache_owned;
  for (Key k : {1, 1, 1, 2, 3, 4, 5, 6}) FetchOne(cache, k);
  EXPECT_EQ(cache.KeysByRecency(), (std::vector<Key>{6, 5, 4, 3}));
  FetchOne(cache, 3);  // a hit moves to the front
  FetchOne(cache, 7);
  EXPECT_EQ(cache.KeysByRecency(), (std::vector<Key>{7, 3, 6, 5}));
}

TEST(MemCacheTest, OneLoadAndOneStorePerFetchDirtyRowsOnly) {
  const auto store_owned = NewStore();
  InMemoryBackingStore& store = *store_owned;
  const auto cache_owned = Must(MemCache::Create(Config(4, 2), &store));
  MemCache& cache = *cache_owned;
  RowBatch out;
  FetchStats stats;
  ASSERT_TRUE(cache.Fetch(std::vector<Key>{1, 2, 1, 3, 4, 2}, &out, &stats).ok());
  EXPECT_EQ(store.load_calls(), 1);
  EXPECT_EQ(store.rows_loaded(), 4);  // duplicates loaded once
  EXPECT_EQ(stats.keys, 6u);
  EXPECT_EQ(stats.hits, 0u);
  EXPECT_EQ(stats.loaded, 4u);
  EXPECT_EQ(out.values[2 * kLayout.floats()], 1.0f);  // position 2 is key 1's initial row
  UpdateStats us;
  ASSERT_TRUE(cache.Update(Rows({1, 2}, 9.0f), &us).ok());
  EXPECT_EQ(us.resident, 2u);
  EXPECT_EQ(store.store_calls(), 0);
  // Four misses evict 1, 2 (dirty) and 3, 4 (clean): one Store of the two dirty rows.
  ASSERT_TRUE(cache.Fetch(std::vector<Key>{5, 6, 7, 8, 3}, &out, &stats).ok());
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_DOUBLE_EQ(stats.hit_rate(), 0.2);
  EXPECT_EQ(stats.evicted, 4u);
  EXPECT_EQ(stats.written_back, 2u);
  EXPECT_EQ(store.store_calls(), 1);
  EXPECT_EQ(store.rows_stored(), 2);
  EXPECT_EQ(store.Peek(1)[0], 9.0f);
  ASSERT_TRUE(cache.Fetch(std::vector<Key>{2}, &out).ok());
  EXPECT_EQ(out.values, std::vector<float>(4, 9.0f));  // read back from the store
}

TEST(MemCacheTest, ZeroBudgetCachesNothingAndWritesThrough) {
  const auto store_owned = NewStore();
  InMemoryBackingStore& store = *store_owned;
  const auto cache_owned =
      Must(MemCache::Create(MemCacheConfig{kLayout, MemCache::RowCost(kLayout) - 1, 8}, &store));
  MemCache& cache = *cache_owned;
  EXPECT_EQ(cache.capacity_rows(), 0u);
  RowBatch out;
  ASSERT_TRUE(cache.Fetch(std::vector<Key>{3, 3}, &out).ok());
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(out.values, (std::vector<float>{3, -3, 0, 0, 3, -3, 0, 0}));
  ASSERT_TRUE(cache.Update(Rows({3}, 5.0f)).ok());
  EXPECT_EQ(store.Peek(3)[1], 5.0f);
  EXPECT_FALSE(cache.Update(RowBatch{{1}, {1.0f}}).ok());  // wrong width
}

TEST(MemCacheTest, BadConfigsAreInvalidInput) {
  const auto store = NewStore(nullptr);
  EXPECT_EQ(MemCache::Create(Config(4, 0), store.get()).status().message(),
            "MemCache: eviction_window outside [1, kMaxEvictionWindow]");
  EXPECT_EQ(MemCache::Check(Config(4, MemCache::kMaxEvictionWindow + 1)).code(),
            Status::Code::kInvalidInput);
  EXPECT_TRUE(MemCache::Check(Config(4, MemCache::kMaxEvictionWindow)).ok());
  EXPECT_EQ(MemCache::Create(Config(4, 1), nullptr).status().message(),
            "MemCache: null backing store");
  EXPECT_EQ(
      MemCache::Create(MemCacheConfig{ValueLayout{3, 0}, 1000, 1}, store.get()).status().message(),
      "MemCache: backing store layout differs");
  EXPECT_EQ(InMemoryBackingStore::Create(ValueLayout{0, 2}).status().code(),
            Status::Code::kInvalidInput);
}

// Fails Load or Store on demand.
class FlakyStore final : public BackingStore {
 public:
  FlakyStore() : inner_(NewStore()) {}
  Status Load(std::span<const Key> keys, RowBatch* out) override {
    if (fail_load) return Status::IoError("load failed");
    Status status = inner_->Load(keys, out);
    if (short_load) out->values.pop_back();  // a broken store: one float short
    return status;
  }
  Status Store(const RowBatch& rows) override {
    return fail_store ? Status::IoError("store failed") : inner_->Store(rows);
  }
  const ValueLayout& layout() const override { return inner_->layout(); }
  bool fail_load = false;
  bool short_load = false;
  bool fail_store = false;

 private:
  std::unique_ptr<InMemoryBackingStore> inner_;
};

TEST(MemCacheTest, LoadErrorFailsOneCallStoreErrorIsSticky) {
  FlakyStore store;
  const auto cache_owned = Must(MemCache::Create(Config(2, 2), &store));
  MemCache& cache = *cache_owned;
  RowBatch out;
  store.fail_load = true;
  EXPECT_EQ(cache.Fetch(std::vector<Key>{1}, &out).code(), Status::Code::kIoError);
  EXPECT_EQ(cache.size(), 0u);
  store.fail_load = false;
  store.short_load = true;
  EXPECT_EQ(cache.Fetch(std::vector<Key>{1}, &out).code(), Status::Code::kInvalidInput);
  EXPECT_FALSE(cache.Contains(1));
  store.short_load = false;
  ASSERT_TRUE(cache.Update(Rows({1, 2}, 4.0f)).ok());
  store.fail_store = true;
  EXPECT_FALSE(cache.Fetch(std::vector<Key>{3, 4}, &out).ok());
  EXPECT_EQ(cache.unstored().keys, (std::vector<Key>{1, 2}));
  store.fail_store = false;
  EXPECT_EQ(cache.Fetch(std::vector<Key>{3}, &out).message(), "store failed");
  EXPECT_FALSE(cache.Flush().ok());
}

TEST(MemCacheTest, RandomSequencesMatchModelWithinBudget) {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 8; ++trial) {
    const auto store_owned = NewStore();
    InMemoryBackingStore& store = *store_owned;
    const size_t rows = rng() % 40;  // 0: nothing cached
    const auto cache_owned =
        Must(MemCache::Create(Config(rows, 1 + static_cast<int32_t>(rng() % 8)), &store));
    MemCache& cache = *cache_owned;
    std::unordered_map<Key, std::vector<float>> model;  // latest value of every key
    const auto truth = [&](Key k) {
      if (const auto it = model.find(k); it != model.end()) return it->second;
      std::vector<float> row(kLayout.floats(), 0.0f);
      InitRow(k, row);
      return row;
    };
    std::uniform_int_distribution<Key> pick(0, 120);
    for (int step = 0; step < 400; ++step) {
      std::vector<Key> keys(1 + rng() % 25);
      for (Key& k : keys) k = pick(rng);
      if (rng() % 3 != 0) {
        size_t want_hits = 0;
        for (Key k : keys) want_hits += cache.Contains(k) ? 1 : 0;
        RowBatch out;
        FetchStats stats;
        ASSERT_TRUE(cache.Fetch(keys, &out, &stats).ok());
        ASSERT_EQ(out.keys, keys);
        for (size_t i = 0; i < keys.size(); ++i) {
          const auto row = out.row(i, kLayout);
          ASSERT_EQ(std::vector<float>(row.begin(), row.end()), truth(keys[i]));
        }
        EXPECT_EQ(stats.hits, want_hits);
      } else {
        RowBatch rows_in = Rows(keys, 0.0f);
        for (float& v : rows_in.values) v = static_cast<float>(rng() % 1000);
        ASSERT_TRUE(cache.Update(rows_in).ok());
        for (size_t i = 0; i < keys.size(); ++i) {
          const auto row = rows_in.row(i, kLayout);
          model[keys[i]].assign(row.begin(), row.end());
        }
      }
      ASSERT_LE(cache.bytes_used(), cache.budget_bytes());
      ASSERT_LE(cache.size(), rows);
      ASSERT_EQ(cache.KeysByRecency().size(), cache.size());
    }
    ASSERT_TRUE(cache.Flush().ok());
    for (const auto& [k, row] : model) {
      const auto stored = store.Peek(k);
      EXPECT_EQ(std::vector<float>(stored.begin(), stored.end()), row) << k;
    }
  }
}

}  // namespace
}  // namespace troupe::paramserver
