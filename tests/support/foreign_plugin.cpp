// A stand-in for troupe_cuda_backends.so from another build of troupe: the right entry point,
// and a table of another ABI version (FOREIGN_ABI) or of this ABI but another build id
// (FOREIGN_BUILD). The loader must refuse both before calling anything in them (GpuPlugin.*).
#include "gpu/cuda_backends_abi.hpp"

namespace {

troupe::gpu::CudaBackendsTable Foreign() {
  troupe::gpu::CudaBackendsTable table{};  // no backends: the loader must not get that far
#ifdef FOREIGN_ABI
  table.header = {troupe::gpu::kCudaBackendsAbi + 1, "a later troupe"};
#else
  table.header = {troupe::gpu::kCudaBackendsAbi, "troupe 0.0.0, another compiler"};
#endif
  return table;
}

const troupe::gpu::CudaBackendsTable kTable = Foreign();

}  // namespace

extern "C" __attribute__((visibility("default"))) const troupe::gpu::CudaBackendsTable*
troupe_cuda_backends() {
  return &kTable;
}
