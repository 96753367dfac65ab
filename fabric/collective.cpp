// The ring's flows and bytes (collective.hpp has the derivation and its sources).
#include "fabric/collective.hpp"

namespace troupe::fabric {

CollectiveTraffic AllReduceTraffic(std::span<const JobPart> parts, double gradient_bytes,
                                   Collective collective) {
  CollectiveTraffic traffic;
  std::vector<int32_t> servers;
  int64_t ranks = 0;
  for (const JobPart& part : parts) {
    if (part.gpus <= 0) continue;  // a server the job holds no GPU of takes no part
    servers.push_back(part.server);
    ranks += part.gpus;
  }
  auto k = static_cast<int64_t>(servers.size());
  if (k < 2) return traffic;
  for (size_t i = 0; i < servers.size(); ++i) {
    traffic.flows.emplace_back(servers[i], servers[(i + 1) % servers.size()]);
  }
  // The ring whose every hop is sent over: all GPUs (ring) or one rank per server (hierarchical).
  int64_t ring = collective == Collective::kRing ? ranks : k;
  traffic.bytes_per_flow =
      2.0 * static_cast<double>(ring - 1) / static_cast<double>(ring) * gradient_bytes;
  traffic.steps = static_cast<int32_t>(2 * (ring - 1));
  return traffic;
}

double AllReduceSeconds(const CollectiveTraffic& traffic, double slowest_rate, double latency_s) {
  if (traffic.flows.empty()) return 0;
  return traffic.bytes_per_flow / slowest_rate + traffic.steps * latency_s;
}

double RingAllReduceSeconds(double bytes, int32_t ranks, double bytes_per_s, double latency_s) {
  if (ranks < 2) return 0;
  double n = ranks;
  return 2 * (n - 1) / n * bytes / bytes_per_s + 2 * (n - 1) * latency_s;
}

}  // namespace troupe::fabric
