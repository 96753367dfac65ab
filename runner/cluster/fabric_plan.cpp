#include "runner/cluster/fabric_plan.hpp"

#include <memory>
#include <utility>

#include "fabric/link_slowdowns.hpp"
#include "fabric/topology.hpp"

namespace troupe {

Status PlanFabric(const config::RunConfig& cfg, const std::string& config_name, int32_t servers,
                  const ModelCatalog& catalog, SchedulerOptions* scheduler) {
  if (!cfg.has_fabric()) return Status::Ok();
  const config::Fabric& f = cfg.fabric();
  // Real compute on the cpu backend: the fabric actor paces the gangs' exchanges between servers
  // (actors/fabric_actor.hpp). Other backends' exchanges (NCCL) do not pass through it.
  const std::string& compute = cfg.backends().compute();
  if (cfg.backends().has_compute() && compute != "emulated" && compute != "cpu") {
    return Status::InvalidInput(config_name + ": fabric: backends.compute '" + compute +
                                "' exchanges gradients outside troupe's actors, which the fabric "
                                "cannot pace; use 'cpu' or the emulated throughput with a fabric");
  }
  if (compute == "cpu" && cfg.backends().collective() == "nccl") {
    return Status::InvalidInput(config_name +
                                ": fabric: backends.collective 'nccl' exchanges gradients outside "
                                "troupe's actors, which the fabric cannot pace");
  }
  if (compute == "cpu" && f.link_priority() != config::fair) {
    return Status::InvalidInput(
        config_name +
        ": fabric.link_priority: a real run's fabric actor shares its links "
        "fairly; gpu_intensity is for emulated runs");
  }
  for (const ModelProfile& model : catalog.models()) {
    if (model.gradient_bytes <= 0) {
      return Status::InvalidInput(config_name + ": fabric: model '" + model.name +
                                  "' has no gradient size (the catalogue's gradient_mb column), "
                                  "which the fabric needs");
    }
  }
  if (f.placement().has_max_wait_s() && f.placement().rule() != config::consolidate) {
    return Status::InvalidInput(config_name +
                                ": fabric.placement.max_wait_s: only rule consolidate waits");
  }
  if (f.placement().has_candidates() && f.placement().rule() != config::interleave) {
    return Status::InvalidInput(config_name +
                                ": fabric.placement.candidates: only rule interleave scores "
                                "candidate placements");
  }
  if (f.placement().rule() == config::interleave && f.traffic() != config::phased) {
    return Status::InvalidInput(
        config_name +
        ": fabric.placement.rule: interleave needs fabric.traffic phased "
        "(it lines up communication bursts, which the fluid model has not)");
  }
  StatusOr<fabric::Topology> topology = fabric::Topology::Build(f, servers);
  if (!topology.ok()) {
    return Status::InvalidInput(config_name + ": " + topology.status().message());
  }
  auto model = std::make_shared<scheduling::FabricModel>();
  model->topology = std::move(topology).value();
  model->collective = f.collective() == config::ring ? fabric::Collective::kRing
                                                     : fabric::Collective::kHierarchicalRing;
  model->traffic = f.traffic() == config::phased ? scheduling::TrafficModel::kPhased
                                                 : scheduling::TrafficModel::kFluid;
  model->comm_overlap = f.has_comm_overlap() ? f.comm_overlap() : -1;
  model->priority = f.link_priority() == config::gpu_intensity
                        ? scheduling::LinkPriority::kGpuIntensity
                        : scheduling::LinkPriority::kFair;
  model->max_priority_ratio = f.max_priority_ratio();
  if (f.placement().rule() == config::interleave) {
    model->interleave_candidates = f.placement().candidates();
  }
  scheduler->fabric = std::move(model);
  scheduler->consolidate_racks = f.placement().rule() == config::consolidate;
  scheduler->consolidation_wait_s = f.placement().max_wait_s();
  return Status::Ok();
}

Status PlanSlowLinks(const config::RunConfig& cfg, const std::string& config_name,
                     const std::vector<LinkStretch>& stretches, SchedulerOptions* scheduler) {
  if (!scheduler->fabric || stretches.empty()) return Status::Ok();
  if (cfg.run().mode() == config::real) {
    return Status::InvalidInput(config_name +
                                ": faults.stragglers.trace: a link episode slows the emulated "
                                "fabric; a real run's links keep their capacity");
  }
  const fabric::Topology& topology = scheduler->fabric->topology;
  // Each rack's uplink and downlink (the link above its top-of-rack switch).
  std::vector<std::vector<int32_t>> uplinks(static_cast<size_t>(topology.racks()));
  for (size_t l = 0; l < topology.links(); ++l) {
    const fabric::Link& link = topology.link(static_cast<int32_t>(l));
    if (link.level == fabric::LinkLevel::kRackUp || link.level == fabric::LinkLevel::kRackDown) {
      uplinks[static_cast<size_t>(link.owner)].push_back(static_cast<int32_t>(l));
    }
  }
  std::vector<fabric::LinkSlowdown> slowdowns;
  for (const LinkStretch& s : stretches) {
    for (int32_t link : uplinks[static_cast<size_t>(s.rack)]) {
      slowdowns.push_back({.link = link, .from_s = s.from_s, .to_s = s.to_s, .factor = s.factor});
    }
  }
  auto model = std::make_shared<scheduling::FabricModel>(*scheduler->fabric);
  model->slowdowns = fabric::LinkSlowdowns(std::move(slowdowns));
  scheduler->fabric = std::move(model);
  return Status::Ok();
}

}  // namespace troupe
