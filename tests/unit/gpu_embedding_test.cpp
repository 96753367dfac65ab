// Embedding bags (gpu/embedding.hpp): the CPU reference on a hand-worked batch and against naive
// loops on random ones; the CUDA kernels against the CPU reference where a GPU answers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "gpu/compute_backend.hpp"
#include "gpu/embedding.hpp"

namespace troupe::gpu {
namespace {

constexpr float kPoison = std::numeric_limits<float>::quiet_NaN();

TEST(GpuCpuEmbedding, PoolsAndScattersAHandWorkedBatch) {
  // Three rows of stride 3 (dim 2 + one optimizer float that must be ignored).
  const std::vector<float> table = {1, 2, 100, 10, 20, 100, -3, 5, 100};
  const EmbeddingBags bags{.offsets = {0, 2, 2, 5}, .indices = {0, 2, 1, 1, 0}};
  std::unique_ptr<EmbeddingBackend> cpu = MakeCpuEmbedding();
  std::vector<float> pooled(6, kPoison);
  ASSERT_TRUE(cpu->Forward(table, 2, 3, bags, &pooled).ok());
  EXPECT_EQ(pooled, (std::vector<float>{-2, 7, 0, 0, 21, 42}));
  std::vector<float> grad(6, 1.0f);  // added to
  ASSERT_TRUE(cpu->Backward({1, 2, 3, 4, 5, 6}, 2, bags, &grad).ok());
  // row 0 gets bags 0 and 2, row 1 bag 2 twice, row 2 bag 0.
  EXPECT_EQ(grad, (std::vector<float>{7, 9, 11, 13, 2, 3}));
}

struct RandomBatch {
  std::vector<float> table;
  EmbeddingBags bags;
};

RandomBatch MakeBatch(size_t rows, int32_t stride, size_t bags, uint64_t seed) {
  RandomBatch batch;
  batch.table.resize(rows * stride);
  for (size_t i = 0; i < batch.table.size(); ++i) batch.table[i] = SeededValue(seed, 0, i);
  batch.bags.offsets.push_back(0);
  for (size_t b = 0; b < bags; ++b) {
    const auto pool = static_cast<int32_t>(1 + (b * 7) % 13);  // 1..13 rows a bag, some repeated
    for (int32_t i = 0; i < pool; ++i) {
      const float u = SeededValue(seed, 1, batch.bags.indices.size());
      batch.bags.indices.push_back(static_cast<int32_t>((u + 1) / 2 * static_cast<float>(rows)) %
                                   static_cast<int32_t>(rows));
    }
    batch.bags.offsets.push_back(static_cast<int32_t>(batch.bags.indices.size()));
  }
  return batch;
}

TEST(GpuCpuEmbedding, MatchesNaiveLoopsOnRandomBatches) {
  const int32_t dim = 5, stride = 8;
  const RandomBatch batch = MakeBatch(50, stride, 40, 9);
  std::unique_ptr<EmbeddingBackend> cpu = MakeCpuEmbedding();
  std::vector<float> pooled(40 * dim, kPoison);
  ASSERT_TRUE(cpu->Forward(batch.table, dim, stride, batch.bags, &pooled).ok());
  std::vector<float> pooled_grad(40 * dim), grad(50 * dim, 0.0f);
  for (size_t i = 0; i < pooled_grad.size(); ++i) pooled_grad[i] = SeededValue(9, 2, i);
  ASSERT_TRUE(cpu->Backward(pooled_grad, dim, batch.bags, &grad).ok());
  std::vector<float> want_grad(50 * dim, 0.0f);
  for (size_t b = 0; b < 40; ++b) {
    for (int32_t f = 0; f < dim; ++f) {
      float sum = 0;
      for (int32_t i = batch.bags.offsets[b]; i < batch.bags.offsets[b + 1]; ++i) {
        sum += batch.table[batch.bags.indices[i] * stride + f];
        want_grad[batch.bags.indices[i] * dim + f] += pooled_grad[b * dim + f];
      }
      ASSERT_EQ(pooled[b * dim + f], sum) << "bag " << b;
    }
  }
  EXPECT_EQ(grad, want_grad);
}

TEST(GpuCpuEmbedding, RejectsMalformedBags) {
  std::unique_ptr<EmbeddingBackend> cpu = MakeCpuEmbedding();
  const std::vector<float> table(12, 1.0f);
  std::vector<float> pooled;
  EXPECT_EQ(cpu->Forward(table, 2, 2, {.offsets = {0, 1}, .indices = {6}}, &pooled).code(),
            Status::Code::kInvalidInput);  // row 6 of 6
  EXPECT_EQ(cpu->Forward(table, 2, 2, {.offsets = {0, 2, 1}, .indices = {0, 1}}, &pooled).code(),
            Status::Code::kInvalidInput);  // offsets decrease
  EXPECT_EQ(cpu->Forward(table, 3, 2, {.offsets = {0}, .indices = {}}, &pooled).code(),
            Status::Code::kInvalidInput);  // dim > stride
  std::vector<float> grad(12);
  EXPECT_EQ(cpu->Backward({1, 2, 3}, 2, {.offsets = {0, 1}, .indices = {0}}, &grad).code(),
            Status::Code::kInvalidInput);  // 3 floats for one bag of dim 2
}

TEST(GpuCudaEmbedding, MatchesTheCpuReference) {
  std::unique_ptr<EmbeddingBackend> cuda;
  if (Status s = MakeCudaEmbedding(&cuda); !s.ok()) GTEST_SKIP() << s.message();
  std::unique_ptr<EmbeddingBackend> cpu = MakeCpuEmbedding();
  const int32_t dim = 16, stride = 32;
  const RandomBatch batch = MakeBatch(3000, stride, 2000, 21);
  std::vector<float> got(2000 * dim, kPoison), want;
  ASSERT_TRUE(cuda->Forward(batch.table, dim, stride, batch.bags, &got).ok());
  ASSERT_TRUE(cpu->Forward(batch.table, dim, stride, batch.bags, &want).ok());
  EXPECT_EQ(got, want);  // same summation order per bag
  std::vector<float> pooled_grad(2000 * dim);
  for (size_t i = 0; i < pooled_grad.size(); ++i) pooled_grad[i] = SeededValue(21, 3, i);
  std::vector<float> got_grad(3000 * dim), want_grad(3000 * dim);
  for (size_t i = 0; i < got_grad.size(); ++i) got_grad[i] = want_grad[i] = SeededValue(21, 4, i);
  ASSERT_TRUE(cuda->Backward(pooled_grad, dim, batch.bags, &got_grad).ok());
  ASSERT_TRUE(cpu->Backward(pooled_grad, dim, batch.bags, &want_grad).ok());
  for (size_t i = 0; i < want_grad.size(); ++i) {
    ASSERT_NEAR(got_grad[i], want_grad[i], 1e-5f) << i;  // atomics: another summation order
  }
}

}  // namespace
}  // namespace troupe::gpu
