#include "runner/deployment.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "network/network_plugin.hpp"
#include "runtime/deployment_credentials.hpp"

namespace troupe {

Status PlanDeployment(const config::RunConfig& cfg, const std::string& config_name,
                      const std::vector<std::string>& nodes, RuntimeOptions* runtime) {
  // The network plugin holds the middleman: a run that cannot load it is refused here, before
  // anything runs or is written.
  const NetworkTable* network = nullptr;
  if (Status s = LoadNetwork(&network); !s.ok()) {
    return Status::Internal(config_name + ": " + s.message());
  }
  const std::string& dir = cfg.deployment().credentials_dir();
  if (!dir.empty()) {
    return LoadDeploymentCredentials(dir, config_name + ": deployment.credentials_dir",
                                     &runtime->credentials);
  }
  for (const std::string& node : nodes) {
    const std::string host = node.substr(0, node.rfind(':'));
    if (!node.empty() && !IsLoopbackHost(host)) {
      return Status::InvalidInput(config_name + ": placement node '" + node +
                                  "' is not a loopback address: set " +
                                  "deployment.credentials_dir (docs/deploy.md)");
    }
  }
  return Status::Ok();
}

Status CheckDeploymentCredentials(const config::RunConfig& cfg, const std::string& config_name) {
  const std::string& dir = cfg.deployment().credentials_dir();
  if (dir.empty()) return Status::Ok();
  const std::string where = config_name + ": deployment.credentials_dir";
  std::error_code ec;
  const std::string base = dir.back() == '/' ? dir : dir + "/";
  for (const char* name : {"ca.pem", "cert.pem", "key.pem"}) {
    const std::string path = base + name;
    if (::access(path.c_str(), R_OK) != 0) {
      return Status::InvalidInput(where + ": " + path + ": " + std::strerror(errno));
    }
    if (!std::filesystem::is_regular_file(path, ec)) {
      return Status::InvalidInput(where + ": " + path + ": not a regular file");
    }
  }
  const NetworkTable* network = nullptr;
  if (!LoadNetwork(&network).ok()) return Status::Ok();  // the run needs no network: no TLS
  DeploymentCredentials unused;
  return LoadDeploymentCredentials(dir, where, &unused);
}

}  // namespace troupe
