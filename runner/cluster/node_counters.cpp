#include "runner/cluster/node_counters.hpp"

#include <map>
#include <tuple>

#include "runner/run_directory.hpp"

namespace troupe {

std::vector<NodeCounters> CountByNode(const std::vector<MeasuredLease>& leases,
                                      const std::vector<std::string>& server_nodes) {
  std::map<std::tuple<std::string, int64_t, std::string>, NodeCounters> by;
  for (const MeasuredLease& lease : leases) {
    for (const PartRecord& part : lease.parts) {
      const bool known = part.server >= 0 && static_cast<size_t>(part.server) < server_nodes.size();
      std::string node = known ? server_nodes[static_cast<size_t>(part.server)] : "";
      if (node.empty()) node = "local";
      NodeCounters& c = by[{node, part.pid, part.host}];
      c.node = node;
      c.pid = part.pid;
      c.host = part.host;
      ++c.parts;
      c.steps += part.steps;
      c.exchanges += part.exchanges;
    }
  }
  std::vector<NodeCounters> out;
  for (auto& entry : by) out.push_back(std::move(entry.second));
  return out;
}

std::string NodesCsv(const std::vector<NodeCounters>& nodes) {
  std::string csv = "node,pid,host,parts,steps,exchanges\n";
  for (const NodeCounters& c : nodes) {
    csv += CsvField(c.node) + "," + std::to_string(c.pid) + "," + CsvField(c.host) + "," +
           std::to_string(c.parts) + "," + std::to_string(c.steps) + "," +
           std::to_string(c.exchanges) + "\n";
  }
  return csv;
}

Status StageNodesCsv(const std::string& out_dir, const std::vector<NodeCounters>& nodes) {
  std::string csv = NodesCsv(nodes);
  return StageFile(out_dir, "nodes.csv", [&csv](std::string* chunk) {
    chunk->swap(csv);
    return false;
  });
}

}  // namespace troupe
