// Failure models (docs/faults.md, "Failure models"): component failures drawn from published
// rates — GPU, HBM, host, NIC, switch — each a Poisson process per unit over the model's window,
// turned into crashes of the servers the failed component takes out, restarting after a drawn
// repair time.
//
// Contract: CheckFailureModel refuses, as one InvalidInput line naming the field, an unknown
// preset or component, a component without a rate or with two, a per-switch rate on a component
// that is not a switch, an MTBF of 0, an unknown repair distribution, and a window that ends
// before it starts. DrawFailures is a pure function of the model, the seed and the universe:
// the same inputs give the same events; each component draws from a stream of its own, so
// changing one component's rate leaves the others' failures where they were. A gpu, hbm, host or
// nic failure crashes its server; a switch failure crashes every server of its rack (the
// universe's rack_of_server, from the fabric), or one server when the run has no fabric. No CAF.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "config/config.pb.h"
#include "faults/fault_plan.hpp"

namespace troupe {

// The components a failure model rates and a failure trace names, in the order of their streams.
inline constexpr std::array<const char*, 5> kFailureComponents = {"gpu", "hbm", "host", "nic",
                                                                  "switch"};

// One row of a preset's breakdown: a published cause, its count and the component it maps to.
struct PresetCause {
  const char* cause;
  int count;
  const char* component;
};

// The Llama 3 405B breakdown (419 unexpected interruptions, 16,384 H100s, 54 days).
const std::vector<PresetCause>& Llama3Causes();
inline constexpr double kLlama3Gpus = 16384;
inline constexpr double kLlama3Hours = 54 * 24;

// The model with its preset applied: the preset's components, replaced by the listed ones of the
// same name, then the listed others. Call after CheckFailureModel.
config::FailureModel ResolveFailureModel(const config::FailureModel& model);

// What a component's failures hit over an exposure, expected: the failures per hour of one
// group of `gpus` GPUs on `servers` servers under one switch (a server alone: servers 1).
double FailuresPerHour(const config::FailureComponent& c, double gpus, double servers);

Status CheckFailureModel(const config::FailureModel& model, const std::string& where);

// Appends the drawn crashes to `out` (unsorted), each with cause "failure:COMPONENT".
Status DrawFailures(const config::FailureModel& model, uint64_t run_seed,
                    const FaultUniverse& universe, std::vector<FaultEvent>* out);

}  // namespace troupe
