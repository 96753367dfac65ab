#include "workload/gpu_types.hpp"

#include <array>

namespace troupe {
namespace {

// Gavel's isolated throughputs, iterations per second on one GPU (simulation_throughputs.json,
// the "null" entry of each 1-GPU job type).
struct GavelThroughput {
  std::string_view gavel_model;
  double k80, p100, v100;
};
constexpr std::array<GavelThroughput, 4> kGavel = {{
    {"ResNet-18 (batch size 256)", 0.885580, 7.722785, 10.300257},
    {"ResNet-50 (batch size 128)", 0.347224, 1.584352, 2.496766},
    {"Transformer (batch size 128)", 0.981583, 3.073535, 5.446105},
    {"LM (batch size 20)", 17.142290, 58.172672, 64.742451},
}};

// Each catalogue model (configs/models/synergy_models.csv) and the Gavel model nearest it: the
// small image CNNs and M5 (a 1-D CNN) at large batches take ResNet-18 at its largest batch;
// ResNet-50 itself; the sequence-to-sequence models Transformer at batch 128 (theirs); the
// recurrent models at batch 20 (theirs) the LSTM language model.
struct Counterpart {
  std::string_view model, gavel_model;
};
constexpr std::array<Counterpart, 10> kCounterparts = {{
    {"alexnet", "ResNet-18 (batch size 256)"},
    {"res18", "ResNet-18 (batch size 256)"},
    {"mobilenet", "ResNet-18 (batch size 256)"},
    {"shufflenet", "ResNet-18 (batch size 256)"},
    {"m5", "ResNet-18 (batch size 256)"},
    {"res50", "ResNet-50 (batch size 128)"},
    {"gnmt", "Transformer (batch size 128)"},
    {"transformer", "Transformer (batch size 128)"},
    {"lstm", "LM (batch size 20)"},
    {"deepspeech", "LM (batch size 20)"},
}};

// Derived types: peak dense FP16 Tensor Core TFLOPS (no sparsity) of the SXM parts, from NVIDIA's
// architecture whitepapers (see gpu_types.hpp). One ratio per type, the same for every model.
constexpr double kV100PeakTflops = 125.0;
constexpr double kA100PeakTflops = 312.0;
constexpr double kH100PeakTflops = 989.4;

const GavelThroughput* Measured(std::string_view model) {
  for (const Counterpart& c : kCounterparts) {
    if (c.model != model) continue;
    for (const GavelThroughput& g : kGavel) {
      if (g.gavel_model == c.gavel_model) return &g;
    }
  }
  return nullptr;
}

}  // namespace

const std::vector<std::string>& KnownGpuTypes() {
  static const std::vector<std::string> kTypes = {"k80", "p100", "v100", "a100", "h100"};
  return kTypes;
}

std::string KnownGpuTypesList() {
  std::string out;
  for (const std::string& t : KnownGpuTypes()) out += (out.empty() ? "" : ", ") + t;
  return out;
}

bool IsKnownGpuType(std::string_view type) {
  for (const std::string& t : KnownGpuTypes()) {
    if (t == type) return true;
  }
  return false;
}

std::optional<double> GpuTypeSpeed(std::string_view model, std::string_view type) {
  const GavelThroughput* g = Measured(model);
  if (g == nullptr) return std::nullopt;
  if (type == "k80") return g->k80 / g->v100;
  if (type == "p100") return g->p100 / g->v100;
  if (type == "v100") return 1.0;
  if (type == "a100") return kA100PeakTflops / kV100PeakTflops;
  if (type == "h100") return kH100PeakTflops / kV100PeakTflops;
  return std::nullopt;
}

std::string_view GavelCounterpart(std::string_view model) {
  for (const Counterpart& c : kCounterparts) {
    if (c.model == model) return c.gavel_model;
  }
  return "";
}

}  // namespace troupe
