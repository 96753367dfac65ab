// ComputeBackend: the real work of a job's training step in real mode, on the devices its lease
// names, with the step's measured time (what the emulated throughput model predicts otherwise).
//
// A step is a chain of GEMMs, X_{l+1} = X_l · W_l (row-major; X_0 is rows × width, each W_l
// width × width), sized by PlanStep so its FLOPs match the model's per-iteration cost
// (ModelProfile::iter_time_s × the reference GPU's FLOP/s) times a scale that keeps a step short.
// A job leased N GPUs runs the chain on N devices at once, one stream (CPU: one thread) each:
// data parallel, the same weights on every device, each device its own X_0.
//
// Contract:
//   - Lease(plan, devices, seed) allocates and fills every device's buffers; values come from
//     SeededValue(seed, stream, i) and are identical on every backend, so outputs can be compared.
//     Outputs start as NaN, so an element a step fails to write shows. A second Lease replaces
//     the first; Release frees everything (the destructor too).
//   - RunStep runs one step on every leased device and returns the step's time, plus each
//     device's own time. CUDA: the wall time from the first launch to the last device's
//     completion. CPU: the slowest device thread's CPU time — what the step takes on devices of
//     its own; threads that share cores with other work (other parts, other processes) do not
//     count the time they wait for one. A step overwrites the previous output; inputs are not
//     modified, so every step does the same work.
//   - ReadOutput(d) copies device d's last output X_gemms (rows × width floats) to the host.
//   - Every failure (no device, out of memory, a CUDA call) is a Status, never an abort.
//   - Not thread-safe: one caller at a time.
// Backends: "cpu" (the reference, always built) and "cuda" (cuBLAS, in the CUDA backends plugin
// built with CUDA; answers an error Status where the plugin cannot load or no GPU is present).
// MakeComputeBackend picks one by name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "workload/model_catalog.hpp"

namespace troupe::gpu {

struct StepPlan {
  int64_t rows = 0;   // m: the (scaled) batch's examples
  int64_t width = 0;  // n = k: every layer's width
  int32_t gemms = 0;  // chain length
  double flops() const {
    return 2.0 * static_cast<double>(rows) * static_cast<double>(width) *
           static_cast<double>(width) * gemms;
  }
};

// FLOP/s of the GPU the catalogue's iteration times were measured on (Synergy's V100s, FP32;
// the same default as paramserver.gpu_flops).
inline constexpr double kCatalogueGpuFlopsPerS = 14e12;

struct StepSizing {
  // The FLOP/s an iteration's time is converted at: a step on hardware this fast advances a job
  // at the catalogue's speed (PlanRun measures it for "cpu" where the config leaves it 0).
  double reference_flops_per_s = kCatalogueGpuFlopsPerS;
  // Fraction of an iteration's FLOPs one step performs: 1e-3 turns a 0.6 s iteration into
  // ~8.4 GFLOP, about 0.5 ms on an H200.
  double scale = 1e-3;
  int64_t width = 1024;
  int32_t gemms = 8;
};

// The plan with `width` and `gemms` whose FLOPs are closest to `flops` (rows >= 1).
StepPlan PlanStepForFlops(double flops, int64_t width, int32_t gemms);
// The plan for one iteration of `model`: PlanStepForFlops(iter_time_s × reference_flops_per_s ×
// scale, width, gemms). InvalidInput if a sizing field is not positive or the model has no time.
Status PlanStep(const ModelProfile& model, const StepSizing& sizing, StepPlan* plan);

// Deterministic value i of stream `stream` under `seed`, uniform in [-1, 1) and never 0: the
// inputs of every backend (and tests' random inputs). Stream 0 holds the weights; stream 1 + d
// device d's X_0.
float SeededValue(uint64_t seed, uint64_t stream, uint64_t i);

struct StepTiming {
  double seconds = 0;                  // wall time of the whole step (the slowest device)
  std::vector<double> device_seconds;  // each device's own time
  double flops = 0;                    // performed, all devices together
};

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;
  virtual std::string_view name() const = 0;
  // How many devices a Lease may name (CPU: hardware threads; CUDA: visible GPUs).
  virtual int max_devices() const = 0;

  virtual Status Lease(const StepPlan& plan, int devices, uint64_t seed) = 0;
  virtual Status RunStep(StepTiming* timing) = 0;
  virtual Status ReadOutput(int device, std::vector<float>* out) = 0;
  virtual void Release() = 0;
};

// "cpu" or "cuda". InvalidInput for another name; Internal for "cuda" in a build without CUDA or
// on a machine where no GPU answers (the message says which).
Status MakeComputeBackend(std::string_view kind, std::unique_ptr<ComputeBackend>* out);

std::unique_ptr<ComputeBackend> MakeCpuComputeBackend();
// The "cpu" backend's FLOP/s on one thread of this host: GEMMs `width` wide (at most 2048) for
// about 50 ms of CPU time (at most 100 steps of ~32 MFLOP), measured as steps are.
Status MeasureCpuFlopsPerS(int64_t width, double* flops_per_s);
// cuBLAS, from the CUDA backends plugin (gpu/cuda_backends.hpp, loaded here on first use).
Status MakeCudaComputeBackend(std::unique_ptr<ComputeBackend>* out);

}  // namespace troupe::gpu
