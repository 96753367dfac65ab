// GpuTypes: how fast each model of the catalogue trains on each GPU type, relative to the type
// the catalogue's iteration times were measured on (V100: Synergy's testbed).
//
// The numbers are Gavel's measured single-GPU throughputs (iterations per second of a job alone
// on one GPU, the "null" entries of scheduler/simulation_throughputs.json in
// stanford-futuredata/gavel, MIT licence) for K80, P100 and V100. Gavel measured other models than
// Synergy's catalogue, so each catalogue model takes the Gavel model nearest it in kind and batch
// size (docs/heterogeneity.md lists the mapping); a model's speed on a type is then Gavel's
// throughput there over its V100 throughput.
//
// A100 and H100 are derived, not measured: no per-model training throughput comparable to
// Gavel's was found, so every model takes one ratio per type, the type's peak dense FP16 Tensor
// Core throughput over V100's, from NVIDIA's architecture whitepapers ("NVIDIA Tesla V100 GPU
// Architecture", 2017: 125 TFLOPS, SXM2; "NVIDIA A100 Tensor Core GPU Architecture", 2020:
// 312 TFLOPS, SXM4; "NVIDIA H100 Tensor Core GPU Architecture", 2022: 989.4 TFLOPS, SXM5). That is
// an upper bound on the speed-up that ignores per-model differences (memory-bound and recurrent
// models gain less); docs/heterogeneity.md states the derivation and its limits. Any other type is
// refused with the known types.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace troupe {

// The reference type: a cluster that names no GPU type runs at its speed (1 for every model).
inline constexpr std::string_view kReferenceGpuType = "v100";

// The GPU types troupe knows, in the order speeds are listed: "k80", "p100", "v100" (measured),
// then "a100", "h100" (derived from peak tensor throughput).
const std::vector<std::string>& KnownGpuTypes();
// "k80, p100, v100, a100, h100".
std::string KnownGpuTypesList();
bool IsKnownGpuType(std::string_view type);

// `model`'s throughput on `type` over its throughput on the reference type; nullopt for a model
// or type the table does not hold.
std::optional<double> GpuTypeSpeed(std::string_view model, std::string_view type);

// The Gavel model a catalogue model's speeds come from ("" if none).
std::string_view GavelCounterpart(std::string_view model);

}  // namespace troupe
