// HBM-PS's CPU table (paramserver/hbm_table.hpp).
//
// Contract checked here: Insert/Get round-trip full rows and embeddings in input order, missing
// keys reported in input order; a shard's byte budget is never exceeded and rows that do not fit
// are rejected and listed while other GPUs' shards still take theirs; overwriting costs nothing;
// Accumulate applies SGD and Adagrad exactly (acc += g^2, w -= lr g / sqrt(acc + eps)); Erase
// frees slots for reuse; Drain returns every row once and empties the table. Seeded random
// sequences of batched Insert/Get/Accumulate/Erase equal a std::unordered_map model, budgets
// included. Bad configs, rows and gradients return InvalidInput; nothing throws.
#include "paramserver/hbm_table.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

#include "tests/unit/must.hpp"

namespace troupe::paramserver {
namespace {

constexpr ValueLayout kLayout{4, 4};

HbmConfig Config(int32_t nodes, int32_t gpus, size_t rows_per_gpu,
                 OptimizerKind kind = OptimizerKind::kAdagrad) {
  HbmConfig c;
  c.layout = kLayout;
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.bytes_per_gpu = rows_per_gpu * CpuHbmTable::RowCost(kLayout);
  c.optimizer = OptimizerConfig{kind, 0.1f, 1e-8f};
  return c;
}

RowBatch Rows(const std::vector<Key>& keys, float base = 0) {
  RowBatch b;
  b.keys = keys;
  for (Key k : keys) {
    for (int32_t f = 0; f < kLayout.floats(); ++f) {
      b.values.push_back(base + static_cast<float>(k) + 0.25f * static_cast<float>(f));
    }
  }
  return b;
}

TEST(HbmTableTest, InsertThenGetReturnsRowsInInputOrder) {
  HbmTable table = Must(HbmTable::Create(Config(2, 4, 100)));
  const InsertResult r = Must(table.Insert(Rows({10, 3, 77, 41})));
  EXPECT_EQ(r.inserted, 4u);
  EXPECT_TRUE(r.rejected.empty());
  RowBatch out;
  const std::vector<Key> missing = Must(table.Get(std::vector<Key>{77, 5, 10, 6, 41}, &out));
  EXPECT_EQ(missing, (std::vector<Key>{5, 6}));
  const RowBatch want = Rows({77, 10, 41});
  EXPECT_EQ(out.keys, want.keys);
  EXPECT_EQ(out.values, want.values);
  ASSERT_TRUE(table.Get(std::vector<Key>{3}, &out, RowPart::kEmbedding).ok());
  EXPECT_EQ(out.values, (std::vector<float>{3, 3.25f, 3.5f, 3.75f}));
}

TEST(HbmTableTest, FullShardRejectsAndListsOnlyItsKeys) {
  // 1 node, 2 GPUs: even keys on GPU 0, odd on GPU 1; 2 rows per GPU.
  const std::unique_ptr<CpuHbmTable> owned = Must(CpuHbmTable::Create(Config(1, 2, 2)));
  CpuHbmTable& table = *owned;
  const InsertResult r = Must(table.Insert(Rows({0, 2, 4, 1, 6, 3})));
  EXPECT_EQ(r.inserted, 4u);
  EXPECT_EQ(r.rejected, (std::vector<Key>{4, 6}));
  EXPECT_EQ(table.shard_rows(0), 2u);
  EXPECT_EQ(table.shard_bytes_used(0), 2 * CpuHbmTable::RowCost(kLayout));
  // Overwriting a present key needs no room.
  const InsertResult again = Must(table.Insert(Rows({2, 3}, 100)));
  EXPECT_EQ(again.overwritten, 2u);
  EXPECT_TRUE(again.rejected.empty());
  RowBatch out;
  ASSERT_TRUE(table.Get(std::vector<Key>{2}, &out).ok());
  EXPECT_EQ(out.values, Rows({2}, 100).values);
  // Erasing frees a slot for the next insert.
  EXPECT_EQ(Must(table.Erase(std::vector<Key>{0, 99})), 1u);
  EXPECT_TRUE(Must(table.Insert(Rows({8}))).rejected.empty());
  EXPECT_EQ(table.size(), 4u);
}

TEST(HbmTableTest, SgdAndAdagradUpdatesAreExact) {
  HbmTable sgd = Must(HbmTable::Create(Config(1, 1, 10, OptimizerKind::kSgd)));
  ASSERT_TRUE(sgd.Insert(Rows({1})).ok());
  ASSERT_TRUE(sgd.Accumulate(std::vector<Key>{1}, std::vector<float>{1, 2, 3, 4}).ok());
  RowBatch out;
  ASSERT_TRUE(sgd.Get(std::vector<Key>{1}, &out).ok());
  const std::vector<float> want_sgd = {1 - 0.1f, 1.25f - 0.2f, 1.5f - 0.3f, 1.75f - 0.4f,
                                       2,        2.25f,        2.5f,        2.75f};
  EXPECT_EQ(out.values, want_sgd);

  HbmTable adagrad = Must(HbmTable::Create(Config(1, 1, 10)));
  RowBatch row = Rows({1});
  for (int f = 4; f < 8; ++f) row.values[f] = 0.5f;  // accumulators
  ASSERT_TRUE(adagrad.Insert(row).ok());
  const std::vector<float> g = {1, -2, 0, 4};
  // Twice, as a repeated key in one batch: each occurrence is applied in order.
  ASSERT_TRUE(
      adagrad.Accumulate(std::vector<Key>{1, 1}, std::vector<float>{1, -2, 0, 4, 1, -2, 0, 4})
          .ok());
  ASSERT_TRUE(adagrad.Get(std::vector<Key>{1}, &out).ok());
  for (int f = 0; f < 4; ++f) {
    float w = row.values[f];
    float acc = 0.5f;
    for (int step = 0; step < 2; ++step) {
      acc += g[f] * g[f];
      w -= 0.1f * g[f] / std::sqrt(acc + 1e-8f);
    }
    EXPECT_FLOAT_EQ(out.values[f], w) << f;
    EXPECT_FLOAT_EQ(out.values[4 + f], acc) << f;
  }
  EXPECT_EQ(Must(adagrad.Accumulate(std::vector<Key>{9, 1}, std::vector<float>(8, 0))),
            (std::vector<Key>{9}));
}

TEST(HbmTableTest, DrainReturnsEveryRowOnceAndEmpties) {
  HbmTable table = Must(HbmTable::Create(Config(2, 3, 50)));
  std::vector<Key> keys;
  for (Key k = 0; k < 60; ++k) keys.push_back(k * 7);
  ASSERT_TRUE(table.Insert(Rows(keys)).ok());
  const RowBatch drained = Must(table.Drain());
  EXPECT_EQ(table.size(), 0u);
  ASSERT_EQ(drained.size(), keys.size());
  std::unordered_map<Key, int> count;
  for (size_t i = 0; i < drained.size(); ++i) {
    ++count[drained.keys[i]];
    const RowBatch want = Rows({drained.keys[i]});
    const auto row = drained.row(i, kLayout);
    EXPECT_TRUE(std::equal(row.begin(), row.end(), want.values.begin()));
  }
  for (Key k : keys) EXPECT_EQ(count[k], 1);
  // Deterministic: the same operations drain in the same order.
  HbmTable twin = Must(HbmTable::Create(Config(2, 3, 50)));
  ASSERT_TRUE(twin.Insert(Rows(keys)).ok());
  EXPECT_EQ(Must(twin.Drain()).keys, drained.keys);
}

TEST(HbmTableTest, BadConfigsAndBatchesAreInvalidInput) {
  HbmConfig c = Config(1, 1, 10);
  c.layout = ValueLayout{4, 2};  // Adagrad needs 4 accumulators
  EXPECT_EQ(CheckHbmConfig(c).message(), "Adagrad needs optimizer_floats >= dim");
  EXPECT_EQ(HbmTable::Create(c).status().code(), Status::Code::kInvalidInput);
  c = Config(1, 0, 10);
  EXPECT_EQ(CpuHbmTable::Create(c).status().message(),
            "HBM-PS: nodes and gpus_per_node must be >= 1");
  c = Config(1, 1, 10);
  EXPECT_TRUE(CheckHbmConfig(c).ok());
  c.backend = HbmBackendKind::kCuda;  // built by gpu/, not here
  EXPECT_EQ(HbmTable::Create(c).status().code(), Status::Code::kInvalidInput);
  HbmTable table = Must(HbmTable::Create(Config(1, 1, 10)));
  RowBatch bad = Rows({1});
  bad.values.pop_back();
  EXPECT_EQ(table.Insert(bad).status().code(), Status::Code::kInvalidInput);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.Accumulate(std::vector<Key>{1}, std::vector<float>(3)).status().code(),
            Status::Code::kInvalidInput);
}

// The model: a map per GPU with the same per-GPU row limit, SGD updates.
struct Model {
  int32_t nodes, gpus;
  size_t rows_per_gpu;
  std::unordered_map<Key, std::vector<float>> rows;
  std::vector<size_t> per_gpu;

  int32_t Gpu(Key k) const { return GpuOf(k, nodes, gpus); }
};

TEST(HbmTableTest, RandomBatchesMatchUnorderedMapModel) {
  std::mt19937_64 rng(2026);
  for (int trial = 0; trial < 6; ++trial) {
    Model m{1 + static_cast<int32_t>(rng() % 3),
            1 + static_cast<int32_t>(rng() % 4),
            5 + rng() % 40,
            {},
            {}};
    m.per_gpu.assign(m.gpus, 0);
    const std::unique_ptr<CpuHbmTable> owned =
        Must(CpuHbmTable::Create(Config(m.nodes, m.gpus, m.rows_per_gpu, OptimizerKind::kSgd)));
    CpuHbmTable& table = *owned;
    std::uniform_int_distribution<Key> pick(0, 300);
    for (int step = 0; step < 300; ++step) {
      std::vector<Key> keys(1 + rng() % 30);
      for (Key& k : keys) k = pick(rng);
      const int op = static_cast<int>(rng() % 4);
      if (op == 0) {
        const RowBatch batch = Rows(keys, static_cast<float>(step));
        std::vector<Key> want_rejected;
        for (size_t i = 0; i < keys.size(); ++i) {
          const auto row = batch.row(i, kLayout);
          if (!m.rows.contains(keys[i])) {
            if (m.per_gpu[m.Gpu(keys[i])] == m.rows_per_gpu) {
              want_rejected.push_back(keys[i]);
              continue;
            }
            ++m.per_gpu[m.Gpu(keys[i])];
          }
          m.rows[keys[i]].assign(row.begin(), row.end());
        }
        EXPECT_EQ(Must(table.Insert(batch)).rejected, want_rejected);
      } else if (op == 1) {
        std::vector<float> grads(keys.size() * kLayout.dim);
        for (float& g : grads) g = static_cast<float>(rng() % 9) - 4.0f;
        std::vector<Key> want_missing;
        for (size_t i = 0; i < keys.size(); ++i) {
          const auto it = m.rows.find(keys[i]);
          if (it == m.rows.end()) {
            want_missing.push_back(keys[i]);
            continue;
          }
          for (int f = 0; f < kLayout.dim; ++f) it->second[f] -= 0.1f * grads[i * kLayout.dim + f];
        }
        EXPECT_EQ(Must(table.Accumulate(keys, grads)), want_missing);
      } else if (op == 2) {
        size_t want = 0;
        for (Key k : keys) {
          if (m.rows.erase(k) > 0) {
            --m.per_gpu[m.Gpu(k)];
            ++want;
          }
        }
        EXPECT_EQ(Must(table.Erase(keys)), want);
      } else {
        RowBatch out;
        const std::vector<Key> missing = Must(table.Get(keys, &out));
        std::vector<Key> want_missing;
        std::vector<float> want_values;
        for (Key k : keys) {
          const auto it = m.rows.find(k);
          if (it == m.rows.end()) {
            want_missing.push_back(k);
          } else {
            want_values.insert(want_values.end(), it->second.begin(), it->second.end());
          }
        }
        EXPECT_EQ(missing, want_missing);
        EXPECT_EQ(out.values, want_values);
      }
      for (int32_t g = 0; g < m.gpus; ++g) {
        ASSERT_EQ(table.shard_rows(g), m.per_gpu[g]);
        ASSERT_LE(table.shard_bytes_used(g), m.rows_per_gpu * CpuHbmTable::RowCost(kLayout));
      }
    }
    EXPECT_EQ(Must(table.Drain()).size(), m.rows.size());
  }
}

}  // namespace
}  // namespace troupe::paramserver
