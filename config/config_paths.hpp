// Config paths: which config fields name files troupe reads, and where a relative one is taken
// from.
//
// Contract:
//  - The input paths are workload.trace_file, workload.models_dir, paramserver.criteo_file,
//    deployment.credentials_dir, agents.secret_file, external_scheduler.secret_file,
//    faults.failure_trace and faults.stragglers.trace.
//  - ResolveInputPaths puts `folder` in front of each of them that is set, non-empty and relative;
//    nothing else changes (no sub-message is created, an empty `folder` changes nothing).
//    LoadConfigFile calls it with the config file's folder, so a config names its inputs relative
//    to itself and runs from any current folder; a `--set` applied afterwards stays relative to
//    the current folder. The run record calls it with the current folder, so it names its inputs
//    absolutely and replays from anywhere.
//  - Output places (run.out_dir, paramserver.ssd_dir, agents.port_file,
//    external_scheduler.port_file) are not inputs: they stay relative to the current folder, as
//    `--out` does.
// Pure path arithmetic: nothing here touches the file system.
#pragma once

#include <filesystem>

#include "config/config.pb.h"

namespace troupe {

void ResolveInputPaths(const std::filesystem::path& folder, config::RunConfig* cfg);

}  // namespace troupe
