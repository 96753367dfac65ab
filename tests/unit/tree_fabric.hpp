// A two-level tree as a run's fabric, for tests of the round engine's use of it: `servers`
// servers in racks of `per_rack` under one spine, NICs of `nic_gbps`, each rack's uplink at
// `oversubscription`:1; the model's other fields at their defaults, for the test to set.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "config/config.pb.h"
#include "fabric/topology.hpp"
#include "scheduling/fabric_round.hpp"

namespace troupe::testing {

inline std::shared_ptr<scheduling::FabricModel> TreeFabric(int32_t servers, int32_t per_rack,
                                                           double nic_gbps,
                                                           double oversubscription) {
  config::Fabric fabric;
  fabric.set_servers_per_rack(per_rack);
  fabric.set_server_nic_gbps(nic_gbps);
  fabric.set_tor_oversubscription(oversubscription);
  auto model = std::make_shared<scheduling::FabricModel>();
  StatusOr<fabric::Topology> topology = fabric::Topology::Build(fabric, servers);
  EXPECT_TRUE(topology.ok()) << topology.status().message();
  if (topology.ok()) model->topology = std::move(topology).value();
  return model;
}

}  // namespace troupe::testing
