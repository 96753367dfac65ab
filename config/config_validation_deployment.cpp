// ValidateConfig's rules for where a run's servers live (config_check.hpp): deployment hosts,
// placements on `troupe node`s, and faults that name a node.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/parse.hpp"
#include "base/quoted.hpp"
#include "config/config_check.hpp"
#include "faults/fault_plan.hpp"

namespace troupe::validation {
namespace {

// "host:port" with a non-empty host and a port in 1..65535.
bool ValidNode(const std::string& node) {
  std::string host;
  uint16_t port = 0;
  return SplitHostPort(node, 1, &host, &port);
}

// A range of servers on a node: a `placement` or a deployment host of role "worker".
struct PlacedRange {
  std::string at;  // the field, for messages
  std::string node;
  bool has_range = false;
  int32_t first = 0;
  int32_t last = 0;
};

std::vector<PlacedRange> PlacedRanges(const config::RunConfig& cfg) {
  std::vector<PlacedRange> ranges;
  for (int i = 0; i < cfg.placement_size(); ++i) {
    const config::Placement& p = cfg.placement(i);
    ranges.push_back({"placement[" + std::to_string(i) + "]", p.node(),
                      p.has_first_server() && p.has_last_server(), p.first_server(),
                      p.last_server()});
  }
  for (int i = 0; i < cfg.deployment().host_size(); ++i) {
    const config::Host& h = cfg.deployment().host(i);
    ranges.push_back({"deployment.host[" + std::to_string(i) + "]", h.address(),
                      h.has_first_server() && h.has_last_server(), h.first_server(),
                      h.last_server()});
  }
  return ranges;
}

// Deployment hosts: named once each, a known role, devices enough for their servers' GPUs.
void ValidateHosts(const config::RunConfig& cfg, Check& check) {
  std::vector<int32_t> server_gpus;
  for (const auto& g : cfg.cluster().servers())
    server_gpus.insert(server_gpus.end(), g.count(), g.gpus());
  std::set<std::string> names;
  for (int i = 0; i < cfg.deployment().host_size(); ++i) {
    const config::Host& h = cfg.deployment().host(i);
    const std::string at = "deployment.host[" + std::to_string(i) + "]";
    if (h.name().empty() || !names.insert(h.name()).second) {
      check.Fail(at + ".name",
                 "every host needs a name of its own, got \"" + Excerpt(h.name()) + "\"");
    }
    if (h.role() != "worker") {
      check.Fail(at + ".role",
                 "must be \"worker\" (\"ps\" hosts belong to a paramserver run), got \"" +
                     Excerpt(h.role()) + "\"");
    }
    std::set<int32_t> devices(h.devices().begin(), h.devices().end());
    if (devices.size() != static_cast<size_t>(h.devices_size()) ||
        (!devices.empty() && *devices.begin() < 0)) {
      check.Fail(at + ".devices", "must be distinct non-negative GPU ids");
    }
    int64_t gpus = 0;
    for (int32_t s = h.first_server(); s <= h.last_server(); ++s) {
      if (s >= 0 && static_cast<size_t>(s) < server_gpus.size()) gpus += server_gpus[s];
    }
    if (h.devices_size() > 0 && h.devices_size() < gpus) {
      check.Fail(at + ".devices", "lists " + Num(h.devices_size()) + " devices for servers " +
                                      Num(h.first_server()) + ".." + Num(h.last_server()) + " of " +
                                      Num(gpus) + " GPUs");
    }
  }
}

}  // namespace

void ValidatePlacement(const config::RunConfig& cfg, Check& check) {
  const std::vector<PlacedRange> ranges = PlacedRanges(cfg);
  if (ranges.empty()) return;
  if (cfg.run().mode() != config::real) {
    check.Fail(cfg.placement_size() > 0 ? "placement" : "deployment.host",
               "needs run.mode: real (servers live on other nodes)");
  }
  int64_t servers = 0;
  for (const auto& g : cfg.cluster().servers()) servers += g.count();
  std::vector<size_t> order;  // ranges by first server, to find overlaps
  for (size_t i = 0; i < ranges.size(); ++i) {
    const PlacedRange& p = ranges[i];
    const bool host = p.at.starts_with("deployment");
    if (!ValidNode(p.node)) {
      check.Fail(p.at + (host ? ".address" : ".node"),
                 "must be \"host:port\" with a port in 1..65535, got \"" + Excerpt(p.node) + "\"");
    }
    if (!p.has_range) {
      check.Fail(p.at, "needs both first_server and last_server");
    } else if (p.first < 0 || p.first > p.last || p.last >= servers) {
      check.Fail(p.at, "servers " + Num(p.first) + ".." + Num(p.last) +
                           " are not a range inside the cluster's " + Num(servers) +
                           " servers (0.." + Num(servers - 1) + ")");
    }
    order.push_back(i);
  }
  if (!check.status().ok()) return;  // overlaps mean nothing among malformed ranges
  ValidateHosts(cfg, check);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ranges[a].first < ranges[b].first; });
  for (size_t k = 1; k < order.size(); ++k) {
    const PlacedRange& prev = ranges[order[k - 1]];
    const PlacedRange& next = ranges[order[k]];
    if (next.first <= prev.last) {
      check.Fail(next.at, "servers " + Num(next.first) + ".." + Num(next.last) + " overlap " +
                              prev.at + " (" + Num(prev.first) + ".." + Num(prev.last) + ")");
    }
  }
}

// A fault on node:HOST:PORT needs that `troupe node` among the run's: an emulated run has none, and
// a fault nothing would fire is refused rather than silently ignored.
void ValidateNodeFaults(const config::RunConfig& cfg, Check& check) {
  std::set<std::string> nodes;
  for (const PlacedRange& p : PlacedRanges(cfg)) nodes.insert(p.node);
  for (int i = 0; i < cfg.faults().fault_size(); ++i) {
    const config::Fault& f = cfg.faults().fault(i);
    const std::pair<const char*, const std::string*> sides[] = {{"target", &f.target()},
                                                                {"peer", &f.peer()}};
    for (const auto& [field, text] : sides) {
      ActorSet set;
      if (!ParseActorSet(*text, &set).ok() || set.kind != EndpointKind::kNode ||
          nodes.contains(set.node)) {
        continue;
      }
      check.Fail("faults.fault[" + Num(i) + "]." + field,
                 "node:" + set.node +
                     " is no `troupe node` of this run (placement[].node, "
                     "deployment.host[].address)" +
                     (nodes.empty() ? ": the run places no servers on nodes" : ""));
    }
  }
}

}  // namespace troupe::validation
