// The NCCL side of CollectiveBackend (collective_backend.hpp): one process drives every rank,
// rank r on GPU r, communicators from ncclCommInitAll (cached per rank count), the all-reduces
// of one call grouped so NCCL runs them together. Built only with NCCL; a CUDA build without it
// answers an error.
#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/collective_backend.hpp"
#include "gpu/cuda/cuda_check.cuh"
#include "gpu/cuda/cuda_impl.hpp"
#include "gpu/cuda/device_info.cuh"

#ifdef TROUPE_HAVE_NCCL
#include <nccl.h>

#define TROUPE_NCCL_CHECK(call)                                                \
  do {                                                                         \
    const ncclResult_t troupe_nccl_err_ = (call);                              \
    if (troupe_nccl_err_ != ncclSuccess) {                                     \
      return ::troupe::gpu::CudaFailure(#call, __FILE__, __LINE__,             \
                                        ncclGetErrorString(troupe_nccl_err_)); \
    }                                                                          \
  } while (0)

namespace troupe::gpu {
namespace {

// One rank's device state for one all-reduce size.
struct Rank {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float* buffer = nullptr;
  size_t floats = 0;
};

class NcclCollective final : public CollectiveBackend {
 public:
  explicit NcclCollective(int gpus) : gpus_(gpus) {}
  ~NcclCollective() override { Free(); }

  std::string_view name() const override { return "nccl"; }
  int max_ranks() const override { return gpus_; }

  Status AllReduceSum(std::vector<std::vector<float>>* buffers, double* seconds) override {
    RETURN_IF_ERROR(CheckSameLength(*buffers));
    const size_t floats = (*buffers)[0].size();
    RETURN_IF_ERROR(Prepare(static_cast<int>(buffers->size()), floats));
    for (size_t r = 0; r < ranks_.size(); ++r) {
      TROUPE_CUDA_CHECK(cudaSetDevice(static_cast<int>(r)));
      TROUPE_CUDA_CHECK(cudaMemcpyAsync(ranks_[r].buffer, (*buffers)[r].data(),
                                        floats * sizeof(float), cudaMemcpyHostToDevice,
                                        ranks_[r].stream));
    }
    RETURN_IF_ERROR(Run(seconds));
    for (size_t r = 0; r < ranks_.size(); ++r) {
      TROUPE_CUDA_CHECK(cudaSetDevice(static_cast<int>(r)));
      TROUPE_CUDA_CHECK(cudaMemcpyAsync((*buffers)[r].data(), ranks_[r].buffer,
                                        floats * sizeof(float), cudaMemcpyDeviceToHost,
                                        ranks_[r].stream));
      TROUPE_CUDA_CHECK(cudaStreamSynchronize(ranks_[r].stream));
    }
    return Status::Ok();
  }

  // Makes (or keeps) `ranks` communicators and device buffers of `floats` floats.
  Status Prepare(int ranks, size_t floats) {
    if (ranks > gpus_) {
      return Status::InvalidInput("nccl all-reduce of " + std::to_string(ranks) + " ranks, " +
                                  std::to_string(gpus_) + " GPUs visible");
    }
    if (static_cast<int>(ranks_.size()) == ranks && !ranks_.empty() && ranks_[0].floats == floats) {
      return Status::Ok();
    }
    Free();
    ranks_.resize(static_cast<size_t>(ranks));
    std::vector<ncclComm_t> comms(static_cast<size_t>(ranks));
    std::vector<int> devices(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r) devices[static_cast<size_t>(r)] = r;
    TROUPE_NCCL_CHECK(ncclCommInitAll(comms.data(), ranks, devices.data()));
    for (size_t r = 0; r < ranks_.size(); ++r) {
      Rank& rank = ranks_[r];
      rank.comm = comms[r];
      rank.floats = floats;
      TROUPE_CUDA_CHECK(cudaSetDevice(static_cast<int>(r)));
      TROUPE_CUDA_CHECK(cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking));
      TROUPE_CUDA_CHECK(cudaEventCreate(&rank.start));
      TROUPE_CUDA_CHECK(cudaEventCreate(&rank.stop));
      TROUPE_CUDA_CHECK(cudaMalloc(&rank.buffer, std::max<size_t>(1, floats) * sizeof(float)));
    }
    return Status::Ok();
  }

  // Fills every rank's device buffer with `value` (the benchmark's data; it never reads it back).
  Status Fill(float value) {
    std::vector<float> host(ranks_.empty() ? 0 : ranks_[0].floats, value);
    for (size_t r = 0; r < ranks_.size(); ++r) {
      TROUPE_CUDA_CHECK(cudaSetDevice(static_cast<int>(r)));
      TROUPE_CUDA_CHECK(cudaMemcpy(ranks_[r].buffer, host.data(), host.size() * sizeof(float),
                                   cudaMemcpyHostToDevice));
    }
    return Status::Ok();
  }

  // The grouped all-reduce in place on the device buffers; *seconds: the slowest rank's time.
  Status Run(double* seconds) {
    for (size_t r = 0; r < ranks_.size(); ++r) {
      TROUPE_CUDA_CHECK(cudaSetDevice(static_cast<int>(r)));
      TROUPE_CUDA_CHECK(cudaEventRecord(ranks_[r].start, ranks_[r].stream));
    }
    TROUPE_NCCL_CHECK(ncclGroupStart());
    for (Rank& rank : ranks_) {
      TROUPE_NCCL_CHECK(ncclAllReduce(rank.buffer, rank.buffer, rank.floats, ncclFloat, ncclSum,
                                      rank.comm, rank.stream));
    }
    TROUPE_NCCL_CHECK(ncclGroupEnd());
    *seconds = 0;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      TROUPE_CUDA_CHECK(cudaSetDevice(static_cast<int>(r)));
      TROUPE_CUDA_CHECK(cudaEventRecord(ranks_[r].stop, ranks_[r].stream));
      TROUPE_CUDA_CHECK(cudaEventSynchronize(ranks_[r].stop));
      float ms = 0;
      TROUPE_CUDA_CHECK(cudaEventElapsedTime(&ms, ranks_[r].start, ranks_[r].stop));
      *seconds = std::max(*seconds, ms / 1e3);
    }
    return Status::Ok();
  }

 private:
  // Teardown: failures are not actionable here, so results are deliberately dropped.
  void Free() {
    for (size_t r = 0; r < ranks_.size(); ++r) {
      Rank& rank = ranks_[r];
      (void)cudaSetDevice(static_cast<int>(r));
      if (rank.stream) (void)cudaStreamSynchronize(rank.stream);
      if (rank.buffer) (void)cudaFree(rank.buffer);
      if (rank.start) (void)cudaEventDestroy(rank.start);
      if (rank.stop) (void)cudaEventDestroy(rank.stop);
      if (rank.stream) (void)cudaStreamDestroy(rank.stream);
      if (rank.comm) (void)ncclCommDestroy(rank.comm);
    }
    ranks_.clear();
  }

  int gpus_;
  std::vector<Rank> ranks_;
};

}  // namespace

Status cuda_impl::MakeNcclCollective(std::unique_ptr<CollectiveBackend>* out) {
  int gpus = 0;
  RETURN_IF_ERROR(RequireGpu("nccl", &gpus));
  *out = std::make_unique<NcclCollective>(gpus);
  return Status::Ok();
}

Status cuda_impl::MeasureNcclAllReduce(size_t floats, int ranks, int repeats,
                                       AllReduceMeasurement* out) {
  int gpus = 0;
  RETURN_IF_ERROR(RequireGpu("nccl", &gpus));
  NcclCollective nccl(gpus);
  RETURN_IF_ERROR(nccl.Prepare(ranks, floats));
  RETURN_IF_ERROR(nccl.Fill(1.0f));
  double seconds = 0;
  RETURN_IF_ERROR(nccl.Run(&seconds));  // warm-up: NCCL sets up its channels here
  double total = 0;
  for (int i = 0; i < std::max(1, repeats); ++i) {
    RETURN_IF_ERROR(nccl.Run(&seconds));
    total += seconds;
  }
  out->seconds = total / std::max(1, repeats);
  const double bytes = static_cast<double>(floats) * sizeof(float);
  const double factor = ranks > 1 ? 2.0 * (ranks - 1) / ranks : 1.0;
  out->bus_bytes_per_s = out->seconds > 0 ? factor * bytes / out->seconds : 0;
  return Status::Ok();
}

}  // namespace troupe::gpu

#else  // CUDA without NCCL

namespace troupe::gpu {

Status cuda_impl::MakeNcclCollective(std::unique_ptr<CollectiveBackend>*) {
  return Status::Internal("nccl: this build found CUDA but not NCCL");
}

Status cuda_impl::MeasureNcclAllReduce(size_t, int, int, AllReduceMeasurement*) {
  return Status::Internal("nccl: this build found CUDA but not NCCL");
}

}  // namespace troupe::gpu

#endif
