#include "runner/cluster/gpu_type_plan.hpp"

#include <algorithm>
#include <vector>

#include "workload/gpu_types.hpp"

namespace troupe {

Status PlanGpuTypes(const config::RunConfig& cfg, const std::string& config_name,
                    const ModelCatalog& catalog, SchedulerOptions* scheduler) {
  std::vector<std::string> names;
  std::vector<int32_t> server_types;
  const auto& groups = cfg.cluster().servers();
  for (int g = 0; g < groups.size(); ++g) {
    const std::string type =
        groups[g].gpu_type().empty() ? std::string(kReferenceGpuType) : groups[g].gpu_type();
    if (!IsKnownGpuType(type)) {
      return Status::InvalidInput(config_name + ": cluster.servers[" + std::to_string(g) +
                                  "].gpu_type: unknown GPU type '" + type +
                                  "' (known: " + KnownGpuTypesList() + ")");
    }
    auto it = std::find(names.begin(), names.end(), type);
    if (it == names.end()) it = names.insert(names.end(), type);
    server_types.insert(server_types.end(), groups[g].count(),
                        static_cast<int32_t>(it - names.begin()));
  }
  if (names.empty() || (names.size() == 1 && names[0] == kReferenceGpuType)) return Status::Ok();
  auto speeds = std::make_shared<TypeSpeedsByModel>();
  for (const ModelProfile& model : catalog.models()) {
    auto per_type = std::make_shared<std::vector<double>>();
    for (const std::string& type : names) {
      const std::optional<double> speed = GpuTypeSpeed(model.name, type);
      if (!speed) {
        return Status::InvalidInput(config_name + ": cluster.servers: model '" + model.name +
                                    "' has no measured speed on GPU type '" + type + "'");
      }
      per_type->push_back(*speed);
    }
    speeds->emplace(model.name, std::move(per_type));
  }
  scheduler->server_gpu_types = std::move(server_types);
  scheduler->type_speeds = std::move(speeds);
  return Status::Ok();
}

}  // namespace troupe
