// The CPU reference of EmbeddingBackend (embedding.hpp) and the shape checks both backends share.
#include "gpu/embedding.hpp"

#include <algorithm>
#include <string>

#include "base/status_macros.hpp"

namespace troupe::gpu {

Status ValidateEmbeddingBags(const EmbeddingBags& bags, size_t table_rows) {
  if (bags.offsets.empty() || bags.offsets[0] != 0) {
    return Status::InvalidInput("embedding bags: offsets must start with 0");
  }
  for (size_t b = 0; b + 1 < bags.offsets.size(); ++b) {
    if (bags.offsets[b + 1] < bags.offsets[b]) {
      return Status::InvalidInput("embedding bags: offsets decrease at bag " + std::to_string(b));
    }
  }
  if (static_cast<size_t>(bags.offsets.back()) != bags.indices.size()) {
    return Status::InvalidInput("embedding bags: the last offset is not the number of indices");
  }
  for (size_t i = 0; i < bags.indices.size(); ++i) {
    if (bags.indices[i] < 0 || static_cast<size_t>(bags.indices[i]) >= table_rows) {
      return Status::InvalidInput("embedding bags: index " + std::to_string(i) + " (" +
                                  std::to_string(bags.indices[i]) + ") outside the table's " +
                                  std::to_string(table_rows) + " rows");
    }
  }
  return Status::Ok();
}

Status ValidateForward(const std::vector<float>& table, int32_t dim, int32_t row_stride,
                       const EmbeddingBags& bags) {
  if (dim < 1 || row_stride < dim) {
    return Status::InvalidInput("embedding: dim must be >= 1 and <= row_stride");
  }
  if (table.size() % static_cast<size_t>(row_stride) != 0) {
    return Status::InvalidInput("embedding: the table is not a whole number of rows");
  }
  return ValidateEmbeddingBags(bags, table.size() / static_cast<size_t>(row_stride));
}

Status ValidateBackward(const std::vector<float>& pooled_grad, int32_t dim,
                        const EmbeddingBags& bags, const std::vector<float>& table_grad) {
  if (dim < 1) return Status::InvalidInput("embedding: dim must be >= 1");
  const auto d = static_cast<size_t>(dim);
  if (pooled_grad.size() != bags.bags() * d || table_grad.size() % d != 0) {
    return Status::InvalidInput("embedding backward: gradients do not match bags and dim");
  }
  return ValidateEmbeddingBags(bags, table_grad.size() / d);
}

namespace {

class CpuEmbedding final : public EmbeddingBackend {
 public:
  std::string_view name() const override { return "cpu"; }

  Status Forward(const std::vector<float>& table, int32_t dim, int32_t row_stride,
                 const EmbeddingBags& bags, std::vector<float>* pooled) override {
    RETURN_IF_ERROR(ValidateForward(table, dim, row_stride, bags));
    const auto d = static_cast<size_t>(dim);
    pooled->assign(bags.bags() * d, 0.0f);
    for (size_t b = 0; b < bags.bags(); ++b) {
      float* out = pooled->data() + b * d;
      for (int32_t i = bags.offsets[b]; i < bags.offsets[b + 1]; ++i) {
        const float* row =
            table.data() + static_cast<size_t>(bags.indices[static_cast<size_t>(i)]) *
                               static_cast<size_t>(row_stride);
        for (size_t f = 0; f < d; ++f) out[f] += row[f];
      }
    }
    return Status::Ok();
  }

  Status Backward(const std::vector<float>& pooled_grad, int32_t dim, const EmbeddingBags& bags,
                  std::vector<float>* table_grad) override {
    RETURN_IF_ERROR(ValidateBackward(pooled_grad, dim, bags, *table_grad));
    const auto d = static_cast<size_t>(dim);
    for (size_t b = 0; b < bags.bags(); ++b) {
      const float* g = pooled_grad.data() + b * d;
      for (int32_t i = bags.offsets[b]; i < bags.offsets[b + 1]; ++i) {
        float* row =
            table_grad->data() + static_cast<size_t>(bags.indices[static_cast<size_t>(i)]) * d;
        for (size_t f = 0; f < d; ++f) row[f] += g[f];
      }
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<EmbeddingBackend> MakeCpuEmbedding() { return std::make_unique<CpuEmbedding>(); }

}  // namespace troupe::gpu
