// CudaHbmTable (gpu/cuda_hbm_table.hpp) against CpuHbmTable, the reference it must reproduce:
// the same random batches (duplicates, absent keys, overflow past the row budget, erases) through
// both, every answer compared. Needs a GPU (skipped with the reason otherwise); its config checks
// run everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include "gpu/compute_backend.hpp"
#include "gpu/cuda_hbm_table.hpp"
#include "tests/unit/must.hpp"

namespace troupe::gpu {
namespace {

using paramserver::CpuHbmTable;
using paramserver::HbmBackend;
using paramserver::HbmConfig;
using paramserver::Key;
using paramserver::RowBatch;
using paramserver::RowPart;

TEST(GpuCudaHbmTable, RejectsTheConfigsTheCpuTableRejects) {
  HbmConfig config;
  config.gpus_per_node = 0;
  std::unique_ptr<HbmBackend> table;
  EXPECT_EQ(MakeCudaHbmTable(config, &table).code(), Status::Code::kInvalidInput);
  config.gpus_per_node = 2;
  config.layout.optimizer_floats = 2;  // Adagrad needs dim (8) optimizer floats
  EXPECT_EQ(MakeCudaHbmTable(config, &table).code(), Status::Code::kInvalidInput);
}

std::vector<Key> Keys(size_t n, uint64_t seed, uint64_t range) {
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = static_cast<Key>((SeededValue(seed, 0, i) + 1) / 2 * static_cast<float>(range)) + 1;
  }
  return keys;
}

RowBatch Rows(const std::vector<Key>& keys, size_t width, uint64_t seed) {
  RowBatch rows{keys, std::vector<float>(keys.size() * width)};
  for (size_t i = 0; i < rows.values.size(); ++i) {
    rows.values[i] = std::abs(SeededValue(seed, 1, i));  // Adagrad state must be >= 0
  }
  return rows;
}

// Rows of a Drain, sorted by key (the two tables drain in different, documented orders).
std::vector<std::pair<Key, std::vector<float>>> ByKey(const RowBatch& batch, size_t width) {
  std::vector<std::pair<Key, std::vector<float>>> out;
  for (size_t i = 0; i < batch.keys.size(); ++i) {
    out.emplace_back(batch.keys[i], std::vector<float>(batch.values.begin() + i * width,
                                                       batch.values.begin() + (i + 1) * width));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5f * (1 + std::abs(want[i]))) << what << " float " << i;
  }
}

void CompareGet(HbmBackend& cuda, HbmBackend& cpu, const std::vector<Key>& keys, RowPart part) {
  RowBatch got, want;
  got.values.assign(keys.size() * 16, std::numeric_limits<float>::quiet_NaN());  // poison
  const std::vector<Key> got_absent = Must(cuda.Get(keys, &got, part));
  const std::vector<Key> want_absent = Must(cpu.Get(keys, &want, part));
  EXPECT_EQ(got_absent, want_absent);
  EXPECT_EQ(got.keys, want.keys);
  ExpectNear(got.values, want.values, "Get");
}

void RunAgainstCpu(const HbmConfig& config) {
  std::unique_ptr<HbmBackend> cuda;
  if (Status s = MakeCudaHbmTable(config, &cuda); !s.ok()) GTEST_SKIP() << s.message();
  const std::unique_ptr<CpuHbmTable> owned = Must(CpuHbmTable::Create(config));
  CpuHbmTable& cpu = *owned;
  const auto width = static_cast<size_t>(config.layout.floats());
  const auto dim = static_cast<size_t>(config.layout.dim);
  const size_t budget = config.bytes_per_gpu / CpuHbmTable::RowCost(config.layout);

  // 1. An insert with repeated keys (the last row wins), then reads of present and absent keys.
  const RowBatch first = Rows(Keys(3000, 1, 2500), width, 1);
  const auto got_insert = Must(cuda->Insert(first));
  const auto want_insert = Must(cpu.Insert(first));
  EXPECT_EQ(got_insert.inserted, want_insert.inserted);
  EXPECT_EQ(got_insert.overwritten, want_insert.overwritten);
  EXPECT_EQ(got_insert.rejected, want_insert.rejected);
  const std::vector<Key> probe = Keys(4000, 2, 5000);
  CompareGet(*cuda, cpu, probe, RowPart::kFull);
  CompareGet(*cuda, cpu, probe, RowPart::kEmbedding);

  // 2. Gradients for present, absent and repeated keys: the optimizer once per occurrence.
  std::vector<Key> grad_keys = Keys(2000, 3, 3000);
  grad_keys.insert(grad_keys.end(), 50, grad_keys[7]);  // a hot key, 51 times
  std::vector<float> gradients(grad_keys.size() * dim);
  for (size_t i = 0; i < gradients.size(); ++i) gradients[i] = SeededValue(4, 0, i);
  EXPECT_EQ(Must(cuda->Accumulate(grad_keys, gradients)),
            Must(cpu.Accumulate(grad_keys, gradients)));
  CompareGet(*cuda, cpu, probe, RowPart::kFull);

  // 3. Erase some, then overflow every shard's budget: the same rows rejected, in input order.
  const std::vector<Key> erase = Keys(700, 5, 2500);
  EXPECT_EQ(Must(cuda->Erase(erase)), Must(cpu.Erase(erase)));
  const RowBatch flood =
      Rows(Keys(budget * config.gpus_per_node + 500, 6, 10 * budget + 9000), width, 6);
  const auto got_flood = Must(cuda->Insert(flood));
  const auto want_flood = Must(cpu.Insert(flood));
  EXPECT_EQ(got_flood.inserted, want_flood.inserted);
  EXPECT_EQ(got_flood.overwritten, want_flood.overwritten);
  EXPECT_EQ(got_flood.rejected, want_flood.rejected);
  EXPECT_FALSE(want_flood.rejected.empty());
  EXPECT_EQ(cuda->size(), cpu.size());
  for (int32_t g = 0; g < config.gpus_per_node; ++g) {
    EXPECT_EQ(cuda->shard_rows(g), cpu.shard_rows(g));
    EXPECT_EQ(cuda->shard_bytes_used(g), cpu.shard_bytes_used(g));
  }

  // 4. Drain: the same rows (sorted by key to compare), both tables empty afterwards.
  const auto got_rows = ByKey(Must(cuda->Drain()), width);
  const auto want_rows = ByKey(Must(cpu.Drain()), width);
  ASSERT_EQ(got_rows.size(), want_rows.size());
  for (size_t i = 0; i < got_rows.size(); ++i) {
    ASSERT_EQ(got_rows[i].first, want_rows[i].first);
    ExpectNear(got_rows[i].second, want_rows[i].second, "Drain");
  }
  EXPECT_EQ(cuda->size(), 0u);
}

TEST(GpuCudaHbmTable, AdagradOverTwoShardsMatchesTheCpuTable) {
  HbmConfig config;
  config.layout = {.dim = 8, .optimizer_floats = 8};
  config.nodes = 2;
  config.gpus_per_node = 2;
  config.bytes_per_gpu = 1500 * CpuHbmTable::RowCost(config.layout);
  RunAgainstCpu(config);
}

TEST(GpuCudaHbmTable, SgdOnOneShardMatchesTheCpuTable) {
  HbmConfig config;
  config.layout = {.dim = 4, .optimizer_floats = 0};
  config.optimizer.kind = paramserver::OptimizerKind::kSgd;
  config.bytes_per_gpu = 2500 * CpuHbmTable::RowCost(config.layout);
  RunAgainstCpu(config);
}

}  // namespace
}  // namespace troupe::gpu
