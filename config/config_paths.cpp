#include "config/config_paths.hpp"

#include <string>

namespace troupe {
namespace {

void Resolve(const std::filesystem::path& folder, std::string* path) {
  if (folder.empty() || path->empty() || std::filesystem::path(*path).is_absolute()) return;
  // Joined, not normalised: "a/../b" is not "b" when a is a symbolic link.
  *path = (folder / *path).string();
}

}  // namespace

void ResolveInputPaths(const std::filesystem::path& folder, config::RunConfig* cfg) {
  if (cfg->workload().has_trace_file()) {
    Resolve(folder, cfg->mutable_workload()->mutable_trace_file());
  }
  if (cfg->workload().has_models_dir()) {
    Resolve(folder, cfg->mutable_workload()->mutable_models_dir());
  }
  if (cfg->paramserver().has_criteo_file()) {
    Resolve(folder, cfg->mutable_paramserver()->mutable_criteo_file());
  }
  if (cfg->deployment().has_credentials_dir()) {
    Resolve(folder, cfg->mutable_deployment()->mutable_credentials_dir());
  }
  if (cfg->agents().has_secret_file()) {
    Resolve(folder, cfg->mutable_agents()->mutable_secret_file());
  }
  if (cfg->external_scheduler().has_secret_file()) {
    Resolve(folder, cfg->mutable_external_scheduler()->mutable_secret_file());
  }
  if (cfg->faults().has_failure_trace()) {
    Resolve(folder, cfg->mutable_faults()->mutable_failure_trace());
  }
  if (cfg->faults().stragglers().has_trace()) {
    Resolve(folder, cfg->mutable_faults()->mutable_stragglers()->mutable_trace());
  }
}

}  // namespace troupe
