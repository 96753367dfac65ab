// A run's fabric records (docs/network.md): links.csv, one row per link and round that carried
// traffic, and summary.json's network block — what contention cost the measured jobs and which
// links were busiest. Deterministic: the same records give the same bytes.
#pragma once

#include <string>
#include <vector>

#include "fabric/link_slowdowns.hpp"
#include "fabric/topology.hpp"
#include "messages/records.hpp"
#include "messages/summary.pb.h"

namespace troupe {

inline constexpr char kLinksCsvHeader[] =
    "round,link,start_s,end_s,capacity_gbps,bytes,utilisation,flows,rate_gbps";

// What a run with a fabric writes besides the usual records.
struct FabricOutput {
  const fabric::Topology* topology = nullptr;
  const std::vector<LinkRecord>* links = nullptr;
  const std::vector<JobNetworkRecord>* jobs = nullptr;  // by job id
  const fabric::LinkSlowdowns* slowdowns = nullptr;     // null: every link at its capacity
};

// One row of links.csv (kLinksCsvHeader), appended to `out`: the capacity and utilisation are the
// round's (a slow link's capacity times its factor at the round's start).
void AppendLinkRow(const FabricOutput& fabric, const LinkRecord& record, std::string* out);

// Fills summary->network from the fabric's job records (of the measured `jobs`) and its links'.
void SummarizeNetwork(const FabricOutput& fabric, const std::vector<JobRecord>& jobs,
                      double makespan_s, summaries::ClusterRunSummary* summary);

}  // namespace troupe
