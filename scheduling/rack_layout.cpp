#include "scheduling/rack_layout.hpp"

#include <algorithm>
#include <functional>

#include "scheduling/cluster_ledger.hpp"

namespace troupe::scheduling {

RackLayout RackLayout::Make(std::vector<int32_t> rack_of_server,
                            const std::vector<ServerShape>& servers, double max_wait_s) {
  RackLayout layout;
  layout.max_wait_s = max_wait_s;
  int32_t racks = 0;
  for (int32_t rack : rack_of_server) racks = std::max(racks, rack + 1);
  layout.servers_of_rack.resize(racks);
  layout.gpus_of_rack.assign(racks, 0);
  for (size_t s = 0; s < rack_of_server.size(); ++s) {
    const int32_t rack = rack_of_server[s];
    layout.servers_of_rack[rack].push_back(static_cast<int32_t>(s));
    layout.gpus_of_rack[rack] += servers[s].gpus;
  }
  layout.rack_of_server = std::move(rack_of_server);
  std::vector<int32_t> sizes = layout.gpus_of_rack;
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  layout.min_racks_for.push_back(0);
  for (size_t r = 0; r < sizes.size(); ++r) {
    const auto total = static_cast<int32_t>(layout.min_racks_for.size()) - 1 + sizes[r];
    while (static_cast<int32_t>(layout.min_racks_for.size()) <= total) {
      layout.min_racks_for.push_back(static_cast<int32_t>(r) + 1);
    }
  }
  return layout;
}

int32_t RackLayout::MinRacks(int32_t gpus) const {
  if (gpus <= 0) return 0;
  if (gpus >= static_cast<int32_t>(min_racks_for.size())) return racks();
  return min_racks_for[gpus];
}

}  // namespace troupe::scheduling
