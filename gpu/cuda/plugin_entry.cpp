// The one exported symbol of troupe_cuda_backends.so (gpu/cuda_backends_abi.hpp): the table of
// the CUDA implementations, tagged with the ABI version and this build's id.
#include <type_traits>

#include "gpu/cuda/cuda_impl.hpp"
#include "gpu/cuda_backends_abi.hpp"

namespace {

const troupe::gpu::CudaBackendsTable kTable{
    .header = {troupe::gpu::kCudaBackendsAbi, TROUPE_BUILD_ID},
    .make_compute = &troupe::gpu::cuda_impl::MakeComputeBackend,
    .make_nccl_collective = &troupe::gpu::cuda_impl::MakeNcclCollective,
    .make_embedding = &troupe::gpu::cuda_impl::MakeEmbedding,
    .make_hbm_table = &troupe::gpu::cuda_impl::MakeHbmTable,
    .append_devices = &troupe::gpu::cuda_impl::AppendDevices,
    .measure_embedding = &troupe::gpu::cuda_impl::MeasureEmbeddingBandwidth,
    .measure_nccl_all_reduce = &troupe::gpu::cuda_impl::MeasureNcclAllReduce,
    .measure_hash_shard = &troupe::gpu::cuda_impl::MeasureHashShard,
    .make_nccl_unique_id = &troupe::gpu::cuda_impl::MakeNcclUniqueId,
    .make_nccl_gang_comm = &troupe::gpu::cuda_impl::MakeNcclGangComm,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const troupe::gpu::CudaBackendsTable*
troupe_cuda_backends() {
  return &kTable;
}

static_assert(std::is_same_v<decltype(&troupe_cuda_backends), troupe::gpu::CudaBackendsEntryFn>);
