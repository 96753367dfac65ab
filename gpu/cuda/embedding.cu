// The CUDA side of EmbeddingBackend (embedding.hpp). One thread per (bag, float): consecutive
// threads read consecutive floats of one row, so every row access is coalesced. Forward sums a
// bag's rows in index order (as the CPU does); backward scatter-adds with atomicAdd.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gpu/cuda/cuda_check.cuh"
#include "gpu/cuda/cuda_impl.hpp"
#include "gpu/cuda/device_buffer.cuh"
#include "gpu/cuda/device_info.cuh"
#include "gpu/embedding.hpp"

namespace troupe::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void EmbeddingForwardKernel(const float* table, int32_t row_stride, int32_t dim,
                                       const int32_t* offsets, const int32_t* indices, int64_t bags,
                                       float* pooled) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= bags * dim) return;
  const int64_t b = t / dim;
  const int32_t f = static_cast<int32_t>(t % dim);
  float sum = 0.0f;
  for (int32_t i = offsets[b]; i < offsets[b + 1]; ++i) {
    sum += table[static_cast<int64_t>(indices[i]) * row_stride + f];
  }
  pooled[t] = sum;
}

__global__ void EmbeddingBackwardKernel(const float* pooled_grad, int32_t dim,
                                        const int32_t* offsets, const int32_t* indices,
                                        int64_t bags, float* table_grad) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= bags * dim) return;
  const int64_t b = t / dim;
  const int32_t f = static_cast<int32_t>(t % dim);
  const float g = pooled_grad[t];
  for (int32_t i = offsets[b]; i < offsets[b + 1]; ++i) {
    atomicAdd(table_grad + static_cast<int64_t>(indices[i]) * dim + f, g);
  }
}

unsigned Blocks(int64_t threads) {
  return static_cast<unsigned>((threads + kThreads - 1) / kThreads);
}

Status LaunchForward(const float* table, int32_t row_stride, int32_t dim, const int32_t* offsets,
                     const int32_t* indices, int64_t bags, float* pooled) {
  if (bags == 0) return Status::Ok();
  EmbeddingForwardKernel<<<Blocks(bags * dim), kThreads>>>(table, row_stride, dim, offsets, indices,
                                                           bags, pooled);
  TROUPE_CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

Status LaunchBackward(const float* pooled_grad, int32_t dim, const int32_t* offsets,
                      const int32_t* indices, int64_t bags, float* table_grad) {
  if (bags == 0) return Status::Ok();
  EmbeddingBackwardKernel<<<Blocks(bags * dim), kThreads>>>(pooled_grad, dim, offsets, indices,
                                                            bags, table_grad);
  TROUPE_CUDA_CHECK_LAUNCH();
  return Status::Ok();
}

class CudaEmbedding final : public EmbeddingBackend {
 public:
  std::string_view name() const override { return "cuda"; }

  Status Forward(const std::vector<float>& table, int32_t dim, int32_t row_stride,
                 const EmbeddingBags& bags, std::vector<float>* pooled) override {
    RETURN_IF_ERROR(ValidateForward(table, dim, row_stride, bags));
    DeviceBuffer<float> d_table, d_pooled;
    DeviceBuffer<int32_t> d_offsets, d_indices;
    RETURN_IF_ERROR(d_table.CopyFrom(table.data(), table.size()));
    RETURN_IF_ERROR(d_offsets.CopyFrom(bags.offsets.data(), bags.offsets.size()));
    RETURN_IF_ERROR(d_indices.CopyFrom(bags.indices.data(), bags.indices.size()));
    pooled->resize(bags.bags() * static_cast<size_t>(dim));
    RETURN_IF_ERROR(d_pooled.Allocate(pooled->size()));
    RETURN_IF_ERROR(LaunchForward(d_table.data(), row_stride, dim, d_offsets.data(),
                                  d_indices.data(), static_cast<int64_t>(bags.bags()),
                                  d_pooled.data()));
    return d_pooled.CopyTo(pooled->data(), pooled->size());
  }

  Status Backward(const std::vector<float>& pooled_grad, int32_t dim, const EmbeddingBags& bags,
                  std::vector<float>* table_grad) override {
    RETURN_IF_ERROR(ValidateBackward(pooled_grad, dim, bags, *table_grad));
    DeviceBuffer<float> d_pooled_grad, d_table_grad;
    DeviceBuffer<int32_t> d_offsets, d_indices;
    RETURN_IF_ERROR(d_pooled_grad.CopyFrom(pooled_grad.data(), pooled_grad.size()));
    RETURN_IF_ERROR(d_table_grad.CopyFrom(table_grad->data(), table_grad->size()));
    RETURN_IF_ERROR(d_offsets.CopyFrom(bags.offsets.data(), bags.offsets.size()));
    RETURN_IF_ERROR(d_indices.CopyFrom(bags.indices.data(), bags.indices.size()));
    RETURN_IF_ERROR(LaunchBackward(d_pooled_grad.data(), dim, d_offsets.data(), d_indices.data(),
                                   static_cast<int64_t>(bags.bags()), d_table_grad.data()));
    return d_table_grad.CopyTo(table_grad->data(), table_grad->size());
  }
};

}  // namespace

Status cuda_impl::MakeEmbedding(std::unique_ptr<EmbeddingBackend>* out) {
  RETURN_IF_ERROR(RequireGpu("cuda embedding"));
  *out = std::make_unique<CudaEmbedding>();
  return Status::Ok();
}

Status cuda_impl::MeasureEmbeddingBandwidth(int64_t rows, int32_t dim, int64_t bags, int32_t pool,
                                            int repeats, EmbeddingMeasurement* out) {
  RETURN_IF_ERROR(RequireGpu("embedding benchmark"));
  TROUPE_CUDA_CHECK(cudaSetDevice(0));
  const size_t n_indices = static_cast<size_t>(bags) * static_cast<size_t>(pool);
  std::vector<int32_t> offsets(static_cast<size_t>(bags) + 1), indices(n_indices);
  for (size_t b = 0; b <= static_cast<size_t>(bags); ++b) {
    offsets[b] = static_cast<int32_t>(b * static_cast<size_t>(pool));
  }
  uint64_t state = 0x2545F4914F6CDD1Dull;  // xorshift: uniform rows, the hard case for caches
  for (int32_t& index : indices) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    index = static_cast<int32_t>(state % static_cast<uint64_t>(rows));
  }
  const size_t table_floats = static_cast<size_t>(rows) * static_cast<size_t>(dim);
  const size_t pooled_floats = static_cast<size_t>(bags) * static_cast<size_t>(dim);
  DeviceBuffer<float> table, grad, pooled;
  DeviceBuffer<int32_t> d_offsets, d_indices;
  RETURN_IF_ERROR(table.Allocate(table_floats));
  RETURN_IF_ERROR(grad.Allocate(table_floats));
  RETURN_IF_ERROR(pooled.Allocate(pooled_floats));
  TROUPE_CUDA_CHECK(cudaMemset(table.data(), 0, table_floats * sizeof(float)));
  TROUPE_CUDA_CHECK(cudaMemset(grad.data(), 0, table_floats * sizeof(float)));
  RETURN_IF_ERROR(d_offsets.CopyFrom(offsets.data(), offsets.size()));
  RETURN_IF_ERROR(d_indices.CopyFrom(indices.data(), indices.size()));
  cudaEvent_t start, stop;
  TROUPE_CUDA_CHECK(cudaEventCreate(&start));
  TROUPE_CUDA_CHECK(cudaEventCreate(&stop));
  const auto timed = [&](bool forward, double* seconds) -> Status {
    for (int r = -1; r < repeats; ++r) {  // r == -1: warm-up, not timed
      if (r == 0) TROUPE_CUDA_CHECK(cudaEventRecord(start));
      RETURN_IF_ERROR(forward ? LaunchForward(table.data(), dim, dim, d_offsets.data(),
                                              d_indices.data(), bags, pooled.data())
                              : LaunchBackward(pooled.data(), dim, d_offsets.data(),
                                               d_indices.data(), bags, grad.data()));
    }
    TROUPE_CUDA_CHECK(cudaEventRecord(stop));
    TROUPE_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    TROUPE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    *seconds = ms / 1e3 / std::max(1, repeats);
    return Status::Ok();
  };
  double fwd_s = 0, bwd_s = 0;
  const Status forward_run = timed(true, &fwd_s);
  const Status s = forward_run.ok() ? timed(false, &bwd_s) : forward_run;
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  RETURN_IF_ERROR(s);
  const double row_bytes = static_cast<double>(dim) * sizeof(float);
  const double index_bytes = static_cast<double>(n_indices) * sizeof(int32_t);
  const double forward_bytes = index_bytes + static_cast<double>(n_indices) * row_bytes +
                               static_cast<double>(pooled_floats) * sizeof(float);
  const double backward_bytes = index_bytes + static_cast<double>(pooled_floats) * sizeof(float) +
                                2.0 * static_cast<double>(n_indices) * row_bytes;
  RETURN_IF_ERROR(PeakMemoryBandwidth(0, &out->peak_bytes_per_s));
  out->forward_bytes_per_s = forward_bytes / fwd_s;
  out->backward_bytes_per_s = backward_bytes / bwd_s;
  out->forward_fraction = out->forward_bytes_per_s / out->peak_bytes_per_s;
  out->backward_fraction = out->backward_bytes_per_s / out->peak_bytes_per_s;
  return Status::Ok();
}

}  // namespace troupe::gpu
