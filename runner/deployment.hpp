// RunConfig.deployment: the credentials a run shows the `troupe node`s it connects to, read and
// checked while the run is planned (bad files are refused before anything runs or is written).
#pragma once

#include <string>
#include <vector>

#include "base/status.hpp"
#include "config/config.pb.h"
#include "runtime/actor_runtime.hpp"

namespace troupe {

// Loads the network plugin (network/network_plugin.hpp; its error is the run's) and
// deployment.credentials_dir into `runtime->credentials` when it is set. Without it, every
// node in `nodes` ("host:port") must be on a loopback address: plaintext never leaves the machine.
Status PlanDeployment(const config::RunConfig& cfg, const std::string& config_name,
                      const std::vector<std::string>& nodes, RuntimeOptions* runtime);

// deployment.credentials_dir, whenever it is set (a run that places no node uses none, but a
// garbage folder is still a mistake): a folder holding readable ca.pem, cert.pem and key.pem,
// whose contents are checked as above when the network plugin loads. InvalidInput naming the
// field and the file otherwise.
Status CheckDeploymentCredentials(const config::RunConfig& cfg, const std::string& config_name);

}  // namespace troupe
