// Embedding bags: the CTR model's sum-pooled lookup (paramserver/ctr_model.hpp) and its backward
// scatter-add, over a dense table of rows (the rows HBM-PS handed out for a batch).
//
// A batch is `bags` bags in CSR form: bag b pools the rows indices[offsets[b] .. offsets[b+1]).
//   Forward:  pooled[b][f] = sum over i in bag b of table[indices[i]][f], summed in index order
//             (the CPU reference; the GPU sums in the same order per bag, one thread a float).
//   Backward: table_grad[indices[i]][f] += pooled_grad[b][f] for every i of every bag b: a row
//             referenced k times receives k contributions (atomic adds on the GPU, so their
//             order, and the last bits of a sum, may differ from the CPU's bag order).
// Row r of `table` starts at r * row_stride floats and its first `dim` floats are the embedding
// (row_stride >= dim lets the optimizer's state sit beside it); pooled and gradient rows are
// exactly `dim` floats. Index and offset errors are InvalidInput, never out-of-bounds reads.
// The CUDA implementation copies the host vectors to the device and back (tests); the bandwidth
// figure of gpu-check.sh comes from MeasureEmbeddingBandwidth, on device-resident data.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "base/status.hpp"

namespace troupe::gpu {

struct EmbeddingBags {
  std::vector<int32_t> offsets;  // bags + 1, non-decreasing, offsets[0] == 0
  std::vector<int32_t> indices;  // offsets[bags] of them, each < the table's rows
  size_t bags() const { return offsets.empty() ? 0 : offsets.size() - 1; }
};

class EmbeddingBackend {
 public:
  virtual ~EmbeddingBackend() = default;
  virtual std::string_view name() const = 0;
  // table: rows × row_stride floats. *pooled is resized to bags × dim and overwritten.
  virtual Status Forward(const std::vector<float>& table, int32_t dim, int32_t row_stride,
                         const EmbeddingBags& bags, std::vector<float>* pooled) = 0;
  // *table_grad: rows × dim floats, added to (the caller zeroes it for a fresh gradient).
  virtual Status Backward(const std::vector<float>& pooled_grad, int32_t dim,
                          const EmbeddingBags& bags, std::vector<float>* table_grad) = 0;
};

// Checks the shapes both backends rely on; InvalidInput naming the first violation.
Status ValidateEmbeddingBags(const EmbeddingBags& bags, size_t table_rows);
Status ValidateForward(const std::vector<float>& table, int32_t dim, int32_t row_stride,
                       const EmbeddingBags& bags);
Status ValidateBackward(const std::vector<float>& pooled_grad, int32_t dim,
                        const EmbeddingBags& bags, const std::vector<float>& table_grad);

std::unique_ptr<EmbeddingBackend> MakeCpuEmbedding();
// From the CUDA backends plugin (gpu/cuda_backends.hpp): Internal where it cannot load or no GPU
// is usable.
Status MakeCudaEmbedding(std::unique_ptr<EmbeddingBackend>* out);

// gpu-check.sh's embedding figure: `bags` bags of `pool` random indices into a table of `rows`
// rows of `dim` floats, all on GPU 0; the bytes each pass must move (indices, the rows read,
// the pooled rows written; backward: the gradient rows read, and each referenced table row read
// and written by its atomic add) over the kernel time, as a fraction of the GPU's peak memory
// bandwidth (from its memory clock and bus width).
struct EmbeddingMeasurement {
  double forward_bytes_per_s = 0, backward_bytes_per_s = 0;
  double peak_bytes_per_s = 0;
  double forward_fraction = 0, backward_fraction = 0;
};
Status MeasureEmbeddingBandwidth(int64_t rows, int32_t dim, int64_t bags, int32_t pool, int repeats,
                                 EmbeddingMeasurement* out);

}  // namespace troupe::gpu
