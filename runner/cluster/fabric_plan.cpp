#include "runner/cluster/fabric_plan.hpp"

#include <memory>
#include <utility>

#include "fabric/topology.hpp"

namespace troupe {

Status PlanFabric(const config::RunConfig& cfg, const std::string& config_name, int32_t servers,
                  const ModelCatalog& catalog, SchedulerOptions* scheduler) {
  if (!cfg.has_fabric()) return Status::Ok();
  const config::Fabric& f = cfg.fabric();
  if (cfg.backends().has_compute() && cfg.backends().compute() != "emulated") {
    return Status::InvalidInput(config_name + ": fabric: backends.compute '" +
                                cfg.backends().compute() +
                                "' measures real steps, which do not cross the fabric; use the "
                                "emulated throughput with a fabric");
  }
  for (const ModelProfile& model : catalog.models()) {
    if (model.gradient_bytes <= 0) {
      return Status::InvalidInput(config_name + ": fabric: model '" + model.name +
                                  "' has no gradient size (the catalogue's gradient_mb column), "
                                  "which the fabric needs");
    }
  }
  StatusOr<fabric::Topology> topology = fabric::Topology::Build(f, servers);
  if (!topology.ok()) {
    return Status::InvalidInput(config_name + ": " + topology.status().message());
  }
  auto model = std::make_shared<scheduling::FabricModel>();
  model->topology = std::move(topology).value();
  model->collective = f.collective() == config::ring ? fabric::Collective::kRing
                                                     : fabric::Collective::kHierarchicalRing;
  model->traffic =
      f.traffic() == config::phased ? scheduling::TrafficModel::kPhased
                                    : scheduling::TrafficModel::kFluid;
  model->comm_overlap = f.has_comm_overlap() ? f.comm_overlap() : -1;
  scheduler->fabric = std::move(model);
  return Status::Ok();
}

}  // namespace troupe
