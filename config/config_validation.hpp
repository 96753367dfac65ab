// ValidateConfig: whether a loaded config (overrides applied) describes a run troupe can plan.
//
// Contract:
//  - Checks every number against its schema range (config/config_ranges.hpp), then the rules a
//    range cannot say: comparisons between fields, totals, names that must exist, the faults the
//    run kind takes (see docs/config.md). Call it after the `--set` overrides, so an override
//    cannot smuggle in a bad value.
//  - Errors are one line, "name: field.path: <why>", where `name` is the config's path.
// Reads nothing but the config.
#pragma once

#include <string>

#include "base/status.hpp"
#include "config/config.pb.h"

namespace troupe {

Status ValidateConfig(const config::RunConfig& cfg, const std::string& name);

}  // namespace troupe
