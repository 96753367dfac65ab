// The run's fabric (docs/network.md): the config's fabric block built into a topology over the
// run's servers, with how jobs use it, for the round engine (scheduling/fabric_round.hpp). A
// config without a fabric block plans none: its runs are exactly those of a cluster without a
// network.
#pragma once

#include <string>
#include <vector>

#include "actors/scheduler_actor.hpp"
#include "base/status.hpp"
#include "config/config.pb.h"
#include "faults/fault_plan.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {

// Refuses (InvalidInput, one line naming the field) a fabric that does not fit the run's servers
// (fabric/topology.hpp says which), a catalogue model without a gradient size, and a fabric
// under real compute that does not exchange through troupe's actors (backends.compute other than
// "cpu", or the "nccl" collective), which the fabric actor cannot pace.
Status PlanFabric(const config::RunConfig& cfg, const std::string& config_name, int32_t servers,
                  const ModelCatalog& catalog, SchedulerOptions* scheduler);

// The `link` stragglers of the fault plan (FaultPlan::link_stretches) as the fabric's slow links:
// each stretch slows its rack's uplink in both directions. Nothing without a fabric or without
// link episodes. Refuses (InvalidInput, one line) link episodes in a real run, whose links keep
// their capacity.
Status PlanSlowLinks(const config::RunConfig& cfg, const std::string& config_name,
                     const std::vector<LinkStretch>& stretches, SchedulerOptions* scheduler);

}  // namespace troupe
