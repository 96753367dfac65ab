// The CPU reference of ComputeBackend (compute_backend.hpp): each leased "device" is a thread
// running the GEMM chain with GemmRowMajor on its own buffers. A device's time is its thread's
// CPU time: a leased GPU is the job's alone, but these threads share the machine's cores with
// every other part and process, and the wall time would measure that sharing, not the step.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "base/status_macros.hpp"
#include "gpu/compute_backend.hpp"
#include "gpu/cpu_gemm.hpp"

namespace troupe::gpu {
namespace {

class CpuComputeBackend final : public ComputeBackend {
 public:
  std::string_view name() const override { return "cpu"; }
  int max_devices() const override {
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }

  Status Lease(const StepPlan& plan, int devices, uint64_t seed) override {
    Release();
    if (plan.rows < 1 || plan.width < 1 || plan.gemms < 1 || devices < 1) {
      return Status::InvalidInput("cpu compute: a lease needs a non-empty plan and >= 1 device");
    }
    plan_ = plan;
    const auto n = static_cast<size_t>(plan.width);
    const auto m = static_cast<size_t>(plan.rows);
    // Weights scaled by sqrt(3 / width): variance 1 / width keeps activations O(1) down the chain.
    const float weight_scale = std::sqrt(3.0f / static_cast<float>(plan.width));
    weights_.resize(static_cast<size_t>(plan.gemms) * n * n);
    for (size_t i = 0; i < weights_.size(); ++i)
      weights_[i] = weight_scale * SeededValue(seed, 0, i);
    devices_.resize(static_cast<size_t>(devices));
    for (size_t d = 0; d < devices_.size(); ++d) {
      devices_[d].input.resize(m * n);
      for (size_t i = 0; i < m * n; ++i) devices_[d].input[i] = SeededValue(seed, 1 + d, i);
      // Outputs start as NaN: a step that skipped an element cannot pass for a correct one.
      devices_[d].ping.assign(m * n, std::numeric_limits<float>::quiet_NaN());
      devices_[d].pong.assign(m * n, std::numeric_limits<float>::quiet_NaN());
    }
    return Status::Ok();
  }

  Status RunStep(StepTiming* timing) override {
    if (devices_.empty()) return Status::InvalidInput("cpu compute: RunStep without a lease");
    timing->device_seconds.assign(devices_.size(), 0);
    std::vector<std::thread> threads;
    for (size_t d = 1; d < devices_.size(); ++d) {
      threads.emplace_back([this, d, timing] { timing->device_seconds[d] = RunChain(d); });
    }
    timing->device_seconds[0] = RunChain(0);
    for (std::thread& t : threads) t.join();
    timing->seconds =
        *std::max_element(timing->device_seconds.begin(), timing->device_seconds.end());
    timing->flops = plan_.flops() * static_cast<double>(devices_.size());
    return Status::Ok();
  }

  Status ReadOutput(int device, std::vector<float>* out) override {
    if (device < 0 || static_cast<size_t>(device) >= devices_.size()) {
      return Status::InvalidInput("cpu compute: no leased device " + std::to_string(device));
    }
    *out = Output(devices_[static_cast<size_t>(device)]);
    return Status::Ok();
  }

  void Release() override {
    devices_.clear();
    weights_.clear();
  }

 private:
  struct Device {
    std::vector<float> input, ping, pong;
  };

  // The chain alternates ping and pong; the last GEMM wrote ping if gemms is odd.
  const std::vector<float>& Output(const Device& dev) const {
    return plan_.gemms % 2 == 1 ? dev.ping : dev.pong;
  }

  // CPU seconds the calling thread has run.
  static double ThreadCpuSeconds() {
    timespec now{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  }

  double RunChain(size_t d) {
    const double start = ThreadCpuSeconds();
    Device& dev = devices_[d];
    const int64_t n = plan_.width;
    const float* x = dev.input.data();
    for (int32_t l = 0; l < plan_.gemms; ++l) {
      float* y = l % 2 == 0 ? dev.ping.data() : dev.pong.data();
      GemmRowMajor(x, weights_.data() + static_cast<size_t>(l) * n * n, y, plan_.rows, n, n);
      x = y;
    }
    return ThreadCpuSeconds() - start;
  }

  StepPlan plan_;
  std::vector<float> weights_;
  std::vector<Device> devices_;
};

}  // namespace

std::unique_ptr<ComputeBackend> MakeCpuComputeBackend() {
  return std::make_unique<CpuComputeBackend>();
}

Status MeasureCpuFlopsPerS(int64_t width, double* flops_per_s) {
  // Steps of ~32 MFLOP (a few ms), a warm-up one apart, until 50 ms of CPU time or 100 steps:
  // bounded however fast or slow the host. The rate hardly depends on the rows; the width is
  // capped so that a very wide chain does not make the calibration allocate gigabytes.
  constexpr double kStepFlops = 32e6, kEnoughSeconds = 0.05;
  constexpr int kMaxSteps = 100;
  StepPlan plan = PlanStepForFlops(kStepFlops, std::min<int64_t>(width, 2048), 1);
  CpuComputeBackend cpu;
  RETURN_IF_ERROR(cpu.Lease(plan, 1, /*seed=*/1));
  StepTiming timing;
  RETURN_IF_ERROR(cpu.RunStep(&timing));
  double seconds = 0, flops = 0;
  for (int i = 0; i < kMaxSteps && seconds < kEnoughSeconds; ++i) {
    RETURN_IF_ERROR(cpu.RunStep(&timing));
    seconds += timing.seconds;
    flops += timing.flops;
  }
  if (!(seconds > 0) || !std::isfinite(flops / seconds)) {
    return Status::Internal("cpu compute: the calibration measured no time");
  }
  *flops_per_s = flops / seconds;
  return Status::Ok();
}

}  // namespace troupe::gpu
