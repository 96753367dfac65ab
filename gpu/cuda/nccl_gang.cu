// NCCL across processes (gpu/nccl_gang.hpp): the unique id, and one process's share of a gang's
// communicator — ncclCommInitRankConfig for each local GPU (grouped when several), non-blocking,
// so joining and every all-reduce wait for the peers with a deadline and abort instead of hanging
// forever when a peer never comes. Built only with NCCL; a CUDA build without it answers an error.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu/collective_backend.hpp"
#include "gpu/cuda/cuda_check.cuh"
#include "gpu/cuda/cuda_impl.hpp"
#include "gpu/cuda/device_info.cuh"
#include "gpu/nccl_gang.hpp"

#ifdef TROUPE_HAVE_NCCL
#include <nccl.h>

static_assert(NCCL_UNIQUE_ID_BYTES == troupe::gpu::kNcclUniqueIdBytes, "ncclUniqueId's size");

namespace troupe::gpu {
namespace {

using Clock = std::chrono::steady_clock;

// ncclInProgress is how a non-blocking communicator says "queued": not a failure.
Status NcclCall(ncclResult_t result, const char* call, const char* file, int line) {
  if (result == ncclSuccess || result == ncclInProgress) return Status::Ok();
  return CudaFailure(call, file, line, ncclGetErrorString(result));
}
#define TROUPE_NCCL_CALL(call) RETURN_IF_ERROR(NcclCall((call), #call, __FILE__, __LINE__))

struct LocalRank {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float* buffer = nullptr;
  size_t floats = 0;
};

class NcclGang final : public NcclGangComm {
 public:
  NcclGang(const NcclRankPlan& plan, double timeout_s) : plan_(plan), timeout_s_(timeout_s) {}
  ~NcclGang() override { Free(); }

  // Every local rank joins; a failure on the way aborts what was started, so nothing waits on it.
  Status Join(const NcclGangOptions& o) {
    Status s = Start(o);
    if (!s.ok() && !broken_) (void)Abort(s.message());
    return s;
  }

  const NcclRankPlan& plan() const override { return plan_; }
  Status AllReduceSum(std::vector<std::vector<float>>* buffers, double* seconds) override;

 private:
  Status Start(const NcclGangOptions& o) {
    ncclUniqueId id;
    std::memcpy(id.internal, o.id.data(), sizeof(id.internal));
    ranks_.resize(o.devices.size());
    for (size_t i = 0; i < ranks_.size(); ++i) ranks_[i].device = o.devices[i];
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    TROUPE_NCCL_CALL(ncclGroupStart());
    for (size_t i = 0; i < ranks_.size(); ++i) {
      TROUPE_CUDA_CHECK(cudaSetDevice(ranks_[i].device));
      TROUPE_NCCL_CALL(ncclCommInitRankConfig(&ranks_[i].comm, plan_.nranks, id,
                                              plan_.first_rank + static_cast<int>(i), &config));
    }
    TROUPE_NCCL_CALL(ncclGroupEnd());
    RETURN_IF_ERROR(WaitForComms("joining"));
    for (LocalRank& rank : ranks_) {
      TROUPE_CUDA_CHECK(cudaSetDevice(rank.device));
      TROUPE_CUDA_CHECK(cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking));
      TROUPE_CUDA_CHECK(cudaEventCreate(&rank.start));
      TROUPE_CUDA_CHECK(cudaEventCreate(&rank.stop));
    }
    return Status::Ok();
  }

  Status AllReduceOnce(std::vector<std::vector<float>>* buffers, double* seconds) {
    if (broken_) return Status::Internal("nccl gang: the communicator was aborted");
    if (buffers->size() != ranks_.size()) {
      return Status::InvalidInput("nccl gang: " + std::to_string(buffers->size()) +
                                  " buffers for " + std::to_string(ranks_.size()) + " local ranks");
    }
    RETURN_IF_ERROR(CheckSameLength(*buffers));
    const size_t floats = (*buffers)[0].size();
    RETURN_IF_ERROR(Reserve(floats));
    for (size_t i = 0; i < ranks_.size(); ++i) {
      LocalRank& r = ranks_[i];
      TROUPE_CUDA_CHECK(cudaSetDevice(r.device));
      TROUPE_CUDA_CHECK(cudaMemcpyAsync(r.buffer, (*buffers)[i].data(), floats * sizeof(float),
                                        cudaMemcpyHostToDevice, r.stream));
      TROUPE_CUDA_CHECK(cudaEventRecord(r.start, r.stream));
    }
    TROUPE_NCCL_CALL(ncclGroupStart());
    for (LocalRank& r : ranks_) {
      TROUPE_CUDA_CHECK(cudaSetDevice(r.device));
      TROUPE_NCCL_CALL(
          ncclAllReduce(r.buffer, r.buffer, floats, ncclFloat, ncclSum, r.comm, r.stream));
    }
    TROUPE_NCCL_CALL(ncclGroupEnd());
    RETURN_IF_ERROR(WaitForComms("queueing the all-reduce"));
    for (size_t i = 0; i < ranks_.size(); ++i) {
      LocalRank& r = ranks_[i];
      TROUPE_CUDA_CHECK(cudaSetDevice(r.device));
      TROUPE_CUDA_CHECK(cudaEventRecord(r.stop, r.stream));
      TROUPE_CUDA_CHECK(cudaMemcpyAsync((*buffers)[i].data(), r.buffer, floats * sizeof(float),
                                        cudaMemcpyDeviceToHost, r.stream));
    }
    RETURN_IF_ERROR(WaitForStreams());
    *seconds = 0;
    for (LocalRank& r : ranks_) {
      float ms = 0;
      TROUPE_CUDA_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));
      *seconds = std::max(*seconds, ms / 1e3);
    }
    return Status::Ok();
  }

  Clock::time_point Deadline() const {
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
  }

  Status Abort(const std::string& why) {
    for (LocalRank& r : ranks_) {
      if (r.comm) (void)ncclCommAbort(r.comm);
      r.comm = nullptr;
    }
    broken_ = true;
    return Status::Internal("nccl gang (ranks " + std::to_string(plan_.first_rank) + "+" +
                            std::to_string(plan_.local_ranks) + " of " +
                            std::to_string(plan_.nranks) + "): " + why);
  }

  // Until no communicator is in progress; an asynchronous error or the deadline aborts them.
  Status WaitForComms(const char* what) {
    const Clock::time_point deadline = Deadline();
    for (;;) {
      bool pending = false;
      for (LocalRank& r : ranks_) {
        ncclResult_t state = ncclSuccess;
        const ncclResult_t asked = ncclCommGetAsyncError(r.comm, &state);
        if (asked != ncclSuccess)
          return Abort(std::string(what) + ": " + ncclGetErrorString(asked));
        if (state == ncclInProgress) {
          pending = true;
        } else if (state != ncclSuccess) {
          return Abort(std::string(what) + ": " + ncclGetErrorString(state));
        }
      }
      if (!pending) return Status::Ok();
      if (Clock::now() > deadline) return Abort(std::string(what) + ": a peer did not answer");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  // Until every stream has drained, watching the communicators for errors and the deadline.
  Status WaitForStreams() {
    const Clock::time_point deadline = Deadline();
    for (LocalRank& r : ranks_) {
      for (;;) {
        const cudaError_t done = cudaStreamQuery(r.stream);
        if (done == cudaSuccess) break;
        if (done != cudaErrorNotReady) {
          return Abort(std::string("the all-reduce: ") + cudaGetErrorString(done));
        }
        ncclResult_t state = ncclSuccess;
        (void)ncclCommGetAsyncError(r.comm, &state);
        if (state != ncclSuccess && state != ncclInProgress) {
          return Abort(std::string("the all-reduce: ") + ncclGetErrorString(state));
        }
        if (Clock::now() > deadline) return Abort("the all-reduce: a peer did not take part");
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      }
    }
    return Status::Ok();
  }

  Status Reserve(size_t floats) {
    for (LocalRank& r : ranks_) {
      if (r.buffer != nullptr && r.floats == floats) continue;
      TROUPE_CUDA_CHECK(cudaSetDevice(r.device));
      if (r.buffer != nullptr) TROUPE_CUDA_CHECK(cudaFree(r.buffer));
      r.buffer = nullptr;
      TROUPE_CUDA_CHECK(cudaMalloc(&r.buffer, std::max<size_t>(1, floats) * sizeof(float)));
      r.floats = floats;
    }
    return Status::Ok();
  }

  // Teardown: failures are not actionable here, so results are deliberately dropped. A healthy
  // communicator is destroyed (its last all-reduce has drained); an aborted one is already gone.
  void Free() {
    for (LocalRank& r : ranks_) {
      (void)cudaSetDevice(r.device);
      if (r.stream) (void)cudaStreamSynchronize(r.stream);
      if (r.buffer) (void)cudaFree(r.buffer);
      if (r.start) (void)cudaEventDestroy(r.start);
      if (r.stop) (void)cudaEventDestroy(r.stop);
      if (r.stream) (void)cudaStreamDestroy(r.stream);
      if (r.comm) (void)(broken_ ? ncclCommAbort(r.comm) : ncclCommDestroy(r.comm));
    }
    ranks_.clear();
  }

  NcclRankPlan plan_;
  double timeout_s_;
  bool broken_ = false;
  std::vector<LocalRank> ranks_;
};

// A failed all-reduce leaves the peers' view of the communicator unknown: it is aborted, so they
// fail too instead of waiting.
Status NcclGang::AllReduceSum(std::vector<std::vector<float>>* buffers, double* seconds) {
  Status s = AllReduceOnce(buffers, seconds);
  if (!s.ok() && !broken_) (void)Abort(s.message());
  return s;
}

}  // namespace

Status cuda_impl::MakeNcclUniqueId(NcclUniqueIdBytes* out) {
  RETURN_IF_ERROR(RequireGpu("nccl gang"));
  ncclUniqueId id;
  TROUPE_NCCL_CALL(ncclGetUniqueId(&id));
  std::memcpy(out->data(), id.internal, out->size());
  return Status::Ok();
}

Status cuda_impl::MakeNcclGangComm(const NcclGangOptions& options,
                                   std::unique_ptr<NcclGangComm>* out) {
  int gpus = 0;
  RETURN_IF_ERROR(RequireGpu("nccl gang", &gpus));
  for (int32_t device : options.devices) {
    if (device < 0 || device >= gpus) {
      return Status::InvalidInput("nccl gang: device " + std::to_string(device) + ", " +
                                  std::to_string(gpus) + " GPUs visible");
    }
  }
  auto gang = std::make_unique<NcclGang>(options.plan, options.timeout_s);
  RETURN_IF_ERROR(gang->Join(options));
  *out = std::move(gang);
  return Status::Ok();
}

}  // namespace troupe::gpu

#else  // CUDA without NCCL

namespace troupe::gpu {

Status cuda_impl::MakeNcclUniqueId(NcclUniqueIdBytes*) {
  return Status::Internal("nccl gang: this build found CUDA but not NCCL");
}

Status cuda_impl::MakeNcclGangComm(const NcclGangOptions&, std::unique_ptr<NcclGangComm>*) {
  return Status::Internal("nccl gang: this build found CUDA but not NCCL");
}

}  // namespace troupe::gpu

#endif
