// nodes.csv: where a real-compute run's steps ran. One row per process that ran parts of leases:
// the node as the config placed it (its "host:port", or "local" for the run's own process), the
// process id and host name the workers reported from there, and what ran there. A step that ran
// anywhere but in the process owning its server would show as a second row of that node, or as
// steps on "local" for a placed server.
#pragma once

#include <string>
#include <vector>

#include "actors/compute_worker_actor.hpp"
#include "base/status.hpp"

namespace troupe {

struct NodeCounters {
  std::string node;  // "host:port" of a `troupe node`, or "local"
  int64_t pid = 0;
  std::string host;
  int64_t parts = 0;  // lease parts run
  int64_t steps = 0;
  int64_t exchanges = 0;  // a gang's gradient exchanges across parts
};

// The counters by (node, pid, host), in that order. `server_nodes[s]`: where server s lives ("":
// this process).
std::vector<NodeCounters> CountByNode(const std::vector<MeasuredLease>& leases,
                                      const std::vector<std::string>& server_nodes);

std::string NodesCsv(const std::vector<NodeCounters>& nodes);

// Writes nodes.csv into out_dir's staging folder (committed with the rest of the run).
Status StageNodesCsv(const std::string& out_dir, const std::vector<NodeCounters>& nodes);

}  // namespace troupe
