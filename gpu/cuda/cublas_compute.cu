// The CUDA side of ComputeBackend (compute_backend.hpp): the GEMM chain with cuBLAS SGEMM (FP32,
// no TF32, so results match the CPU reference to rounding), one stream and one cuBLAS handle per
// leased GPU; CUDA events time each device, the host clock the whole step.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gpu/compute_backend.hpp"
#include "gpu/cuda/cuda_check.cuh"
#include "gpu/cuda/cuda_impl.hpp"
#include "gpu/cuda/device_info.cuh"

#define TROUPE_CUBLAS_CHECK(call)                                                   \
  do {                                                                              \
    const cublasStatus_t troupe_cublas_err_ = (call);                               \
    if (troupe_cublas_err_ != CUBLAS_STATUS_SUCCESS) {                              \
      return ::troupe::gpu::CudaFailure(#call, __FILE__, __LINE__,                  \
                                        cublasGetStatusString(troupe_cublas_err_)); \
    }                                                                               \
  } while (0)

namespace troupe::gpu {
namespace {

struct CudaDevice {
  int ordinal = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float* weights = nullptr;  // gemms × width × width
  float* input = nullptr;    // rows × width
  float* ping = nullptr;
  float* pong = nullptr;
};

class CublasComputeBackend final : public ComputeBackend {
 public:
  explicit CublasComputeBackend(int gpus) : gpus_(gpus) {}
  ~CublasComputeBackend() override { Release(); }

  std::string_view name() const override { return "cuda"; }
  int max_devices() const override { return gpus_; }

  Status Lease(const StepPlan& plan, int devices, uint64_t seed) override {
    Release();
    if (plan.rows < 1 || plan.width < 1 || plan.gemms < 1 || devices < 1) {
      return Status::InvalidInput("cuda compute: a lease needs a non-empty plan and >= 1 device");
    }
    if (devices > gpus_) {
      return Status::InvalidInput("cuda compute: lease of " + std::to_string(devices) + " GPUs, " +
                                  std::to_string(gpus_) + " visible");
    }
    plan_ = plan;
    const size_t n = static_cast<size_t>(plan.width);
    const size_t m = static_cast<size_t>(plan.rows);
    const float weight_scale = std::sqrt(3.0f / static_cast<float>(plan.width));
    std::vector<float> weights(static_cast<size_t>(plan.gemms) * n * n);
    for (size_t i = 0; i < weights.size(); ++i) weights[i] = weight_scale * SeededValue(seed, 0, i);
    std::vector<float> input(m * n);
    devices_.resize(static_cast<size_t>(devices));
    for (size_t d = 0; d < devices_.size(); ++d) {
      CudaDevice& dev = devices_[d];
      dev.ordinal = static_cast<int>(d);
      for (size_t i = 0; i < input.size(); ++i) input[i] = SeededValue(seed, 1 + d, i);
      TROUPE_CUDA_CHECK(cudaSetDevice(dev.ordinal));
      TROUPE_CUDA_CHECK(cudaStreamCreateWithFlags(&dev.stream, cudaStreamNonBlocking));
      TROUPE_CUBLAS_CHECK(cublasCreate(&dev.blas));
      TROUPE_CUBLAS_CHECK(cublasSetStream(dev.blas, dev.stream));
      TROUPE_CUBLAS_CHECK(cublasSetMathMode(dev.blas, CUBLAS_PEDANTIC_MATH));
      TROUPE_CUDA_CHECK(cudaEventCreate(&dev.start));
      TROUPE_CUDA_CHECK(cudaEventCreate(&dev.stop));
      TROUPE_CUDA_CHECK(cudaMalloc(&dev.weights, weights.size() * sizeof(float)));
      TROUPE_CUDA_CHECK(cudaMalloc(&dev.input, m * n * sizeof(float)));
      TROUPE_CUDA_CHECK(cudaMalloc(&dev.ping, m * n * sizeof(float)));
      TROUPE_CUDA_CHECK(cudaMalloc(&dev.pong, m * n * sizeof(float)));
      TROUPE_CUDA_CHECK(cudaMemcpy(dev.weights, weights.data(), weights.size() * sizeof(float),
                                   cudaMemcpyHostToDevice));
      TROUPE_CUDA_CHECK(
          cudaMemcpy(dev.input, input.data(), m * n * sizeof(float), cudaMemcpyHostToDevice));
      // Outputs start as NaN (all-ones bytes): a GEMM that skipped an element cannot pass.
      TROUPE_CUDA_CHECK(cudaMemset(dev.ping, 0xFF, m * n * sizeof(float)));
      TROUPE_CUDA_CHECK(cudaMemset(dev.pong, 0xFF, m * n * sizeof(float)));
    }
    return Status::Ok();
  }

  Status RunStep(StepTiming* timing) override {
    if (devices_.empty()) return Status::InvalidInput("cuda compute: RunStep without a lease");
    const auto start = std::chrono::steady_clock::now();
    for (CudaDevice& dev : devices_) RETURN_IF_ERROR(LaunchChain(dev));
    timing->device_seconds.assign(devices_.size(), 0);
    for (size_t d = 0; d < devices_.size(); ++d) {
      TROUPE_CUDA_CHECK(cudaSetDevice(devices_[d].ordinal));
      TROUPE_CUDA_CHECK(cudaEventSynchronize(devices_[d].stop));
      float ms = 0;
      TROUPE_CUDA_CHECK(cudaEventElapsedTime(&ms, devices_[d].start, devices_[d].stop));
      timing->device_seconds[d] = ms / 1e3;
    }
    timing->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    timing->flops = plan_.flops() * static_cast<double>(devices_.size());
    return Status::Ok();
  }

  Status ReadOutput(int device, std::vector<float>* out) override {
    if (device < 0 || static_cast<size_t>(device) >= devices_.size()) {
      return Status::InvalidInput("cuda compute: no leased device " + std::to_string(device));
    }
    const CudaDevice& dev = devices_[static_cast<size_t>(device)];
    out->resize(static_cast<size_t>(plan_.rows * plan_.width));
    TROUPE_CUDA_CHECK(cudaSetDevice(dev.ordinal));
    TROUPE_CUDA_CHECK(cudaStreamSynchronize(dev.stream));
    TROUPE_CUDA_CHECK(cudaMemcpy(out->data(), plan_.gemms % 2 == 1 ? dev.ping : dev.pong,
                                 out->size() * sizeof(float), cudaMemcpyDeviceToHost));
    return Status::Ok();
  }

  // Frees what Lease made; errors here are not actionable (the device is being given back), so
  // each call is made and its result deliberately dropped.
  void Release() override {
    for (CudaDevice& dev : devices_) {
      (void)cudaSetDevice(dev.ordinal);
      if (dev.stream) (void)cudaStreamSynchronize(dev.stream);
      for (float* p : {dev.weights, dev.input, dev.ping, dev.pong}) {
        if (p) (void)cudaFree(p);
      }
      if (dev.blas) (void)cublasDestroy(dev.blas);
      if (dev.start) (void)cudaEventDestroy(dev.start);
      if (dev.stop) (void)cudaEventDestroy(dev.stop);
      if (dev.stream) (void)cudaStreamDestroy(dev.stream);
    }
    devices_.clear();
  }

 private:
  // Row-major Y = X · W is column-major Y^T = W^T · X^T: cuBLAS sees W as W^T and X as X^T.
  Status LaunchChain(CudaDevice& dev) {
    const int n = static_cast<int>(plan_.width);
    const int m = static_cast<int>(plan_.rows);
    const float one = 1.0f, zero = 0.0f;
    TROUPE_CUDA_CHECK(cudaSetDevice(dev.ordinal));
    TROUPE_CUDA_CHECK(cudaEventRecord(dev.start, dev.stream));
    const float* x = dev.input;
    for (int32_t l = 0; l < plan_.gemms; ++l) {
      float* y = l % 2 == 0 ? dev.ping : dev.pong;
      const float* w = dev.weights + static_cast<size_t>(l) * n * n;
      TROUPE_CUBLAS_CHECK(
          cublasSgemm(dev.blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, n, &one, w, n, x, n, &zero, y, n));
      x = y;
    }
    TROUPE_CUDA_CHECK(cudaEventRecord(dev.stop, dev.stream));
    return Status::Ok();
  }

  int gpus_;
  StepPlan plan_;
  std::vector<CudaDevice> devices_;
};

}  // namespace

Status cuda_impl::MakeComputeBackend(std::unique_ptr<ComputeBackend>* out) {
  int gpus = 0;
  RETURN_IF_ERROR(RequireGpu("cuda compute", &gpus));
  *out = std::make_unique<CublasComputeBackend>(gpus);
  return Status::Ok();
}

}  // namespace troupe::gpu
