// The run's GPU types (docs/heterogeneity.md): which type each server is, by index into the
// types the config names (in order of first appearance; a group naming none is the reference
// type, v100), and each catalogue model's speed on every one of them (workload/gpu_types).
// A cluster that is all of the reference type plans nothing: its runs are exactly those of a
// config that names no type.
#pragma once

#include <string>

#include "actors/scheduler_actor.hpp"
#include "base/status.hpp"
#include "config/config.pb.h"
#include "workload/model_catalog.hpp"

namespace troupe {

// Refuses (InvalidInput, one line naming the field) a type troupe has no speeds for, and a
// catalogue model without a speed on a named type.
Status PlanGpuTypes(const config::RunConfig& cfg, const std::string& config_name,
                    const ModelCatalog& catalog, SchedulerOptions* scheduler);

}  // namespace troupe
