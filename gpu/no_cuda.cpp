// What the CUDA entry points of gpu/ answer in a build without CUDA (or without NCCL): an error
// Status saying so, which callers report and tests turn into a skip. With CUDA, cuda/*.cu
// define them instead.
#include <string>

#include "gpu/collective_backend.hpp"
#include "gpu/compute_backend.hpp"
#include "gpu/embedding.hpp"

namespace troupe::gpu {

#ifndef TROUPE_HAVE_CUDA
namespace {
Status NotBuilt(const std::string& what) {
  return Status::Internal(what + ": this build has no CUDA (configure with -DTROUPE_CUDA=ON)");
}
}  // namespace

Status MakeCudaComputeBackend(std::unique_ptr<ComputeBackend>*) { return NotBuilt("cuda compute"); }
Status MakeCudaEmbedding(std::unique_ptr<EmbeddingBackend>*) { return NotBuilt("cuda embedding"); }
Status MeasureEmbeddingBandwidth(int64_t, int32_t, int64_t, int32_t, int, EmbeddingMeasurement*) {
  return NotBuilt("embedding benchmark");
}
Status MakeNcclCollective(std::unique_ptr<CollectiveBackend>*) { return NotBuilt("nccl"); }
Status MeasureNcclAllReduce(size_t, int, int, AllReduceMeasurement*) { return NotBuilt("nccl"); }
#endif

}  // namespace troupe::gpu
