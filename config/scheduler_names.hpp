// The policy and mechanism a config selects: Scheduler.policy_name / mechanism_name when set
// (any registered name), else the enum fields `policy` / `mechanism` (troupe's own four each,
// whose identifiers are their registered names).
#pragma once

#include <string>

#include "base/status.hpp"
#include "config/config.pb.h"

namespace troupe {

std::string PolicyNameOf(const config::Scheduler& scheduler);
std::string MechanismNameOf(const config::Scheduler& scheduler);

// Both names are registered (scheduling/policy_registry.hpp, mechanism_registry.hpp); otherwise
// one line, "name: scheduler.policy_name: 'x' is not a registered policy (did you mean 'y'?)
// (known: ...)", the "did you mean" when a registered name is close (base/closest_name.hpp).
Status CheckSchedulerNames(const config::Scheduler& scheduler, const std::string& name);

}  // namespace troupe
