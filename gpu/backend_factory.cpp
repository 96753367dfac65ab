// The backends by name, and the CUDA ones through the plugin (gpu/cuda_backends.hpp): each CUDA
// entry point of gpu/ loads troupe_cuda_backends.so on first use and forwards to its table, so
// a process that never asks for a CUDA backend never maps a CUDA library.
#include <string>

#include "base/status_macros.hpp"
#include "gpu/collective_backend.hpp"
#include "gpu/compute_backend.hpp"
#include "gpu/cuda/device_hash_shard.hpp"
#include "gpu/cuda_backends.hpp"
#include "gpu/cuda_hbm_table.hpp"
#include "gpu/embedding.hpp"

namespace troupe::gpu {
namespace {

// The loaded table, or the load's error named after `what` (the backend asked for).
Status Plugin(const std::string& what, const CudaBackendsTable** table) {
  Status s = LoadCudaBackends(table);
  return s.ok() ? s : Status::Internal(what + ": " + s.message());
}

}  // namespace

Status MakeComputeBackend(std::string_view kind, std::unique_ptr<ComputeBackend>* out) {
  if (kind == "cpu") {
    *out = MakeCpuComputeBackend();
    return Status::Ok();
  }
  if (kind == "cuda") return MakeCudaComputeBackend(out);
  return Status::InvalidInput("compute backend '" + std::string(kind) + "': expected cpu or cuda");
}

Status MakeCollectiveBackend(std::string_view kind, const LinkModel& link,
                             std::unique_ptr<CollectiveBackend>* out) {
  if (kind == "emulated") {
    *out = MakeEmulatedCollective(link);
    return Status::Ok();
  }
  if (kind == "cpu") {
    *out = MakeCpuCollective();
    return Status::Ok();
  }
  if (kind == "nccl") return MakeNcclCollective(out);
  return Status::InvalidInput("collective backend '" + std::string(kind) +
                              "': expected emulated, cpu or nccl");
}

Status MakeCudaComputeBackend(std::unique_ptr<ComputeBackend>* out) {
  const CudaBackendsTable* t = nullptr;
  RETURN_IF_ERROR(Plugin("cuda compute", &t));
  return t->make_compute(out);
}

Status MakeNcclCollective(std::unique_ptr<CollectiveBackend>* out) {
  const CudaBackendsTable* t = nullptr;
  RETURN_IF_ERROR(Plugin("nccl", &t));
  return t->make_nccl_collective(out);
}

Status MakeCudaEmbedding(std::unique_ptr<EmbeddingBackend>* out) {
  const CudaBackendsTable* t = nullptr;
  RETURN_IF_ERROR(Plugin("cuda embedding", &t));
  return t->make_embedding(out);
}

Status MakeCudaHbmTable(const paramserver::HbmConfig& config,
                        std::unique_ptr<paramserver::HbmBackend>* out) {
  // A bad config is bad input whether or not the plugin loads: checked here first.
  if (Status s = paramserver::CheckHbmConfig(config); !s.ok()) {
    return Status::InvalidInput("HBM-PS config: " + s.message());
  }
  const CudaBackendsTable* t = nullptr;
  RETURN_IF_ERROR(Plugin("cuda HBM-PS", &t));
  return t->make_hbm_table(config, out);
}

Status MeasureEmbeddingBandwidth(int64_t rows, int32_t dim, int64_t bags, int32_t pool, int repeats,
                                 EmbeddingMeasurement* out) {
  const CudaBackendsTable* t = nullptr;
  RETURN_IF_ERROR(Plugin("embedding benchmark", &t));
  return t->measure_embedding(rows, dim, bags, pool, repeats, out);
}

Status MeasureNcclAllReduce(size_t floats, int ranks, int repeats, AllReduceMeasurement* out) {
  const CudaBackendsTable* t = nullptr;
  RETURN_IF_ERROR(Plugin("nccl", &t));
  return t->measure_nccl_all_reduce(floats, ranks, repeats, out);
}

Status MeasureHashShard(size_t keys, int repeats, HashMeasurement* out) {
  const CudaBackendsTable* t = nullptr;
  RETURN_IF_ERROR(Plugin("hash benchmark", &t));
  return t->measure_hash_shard(keys, repeats, out);
}

}  // namespace troupe::gpu
