// ExecuteRun: one run of a planned cluster, start to finish.
//
// It starts an actor runtime in the plan's mode, spawns the metrics recorder, the servers (here,
// or on the `troupe node` processes the placement names), the workload and the scheduler, drives
// the actors until the scheduler ends the run, and summarises the records. When the plan names
// an output folder it writes the run directory there (all of it or nothing).
#pragma once

#include <optional>
#include <vector>

#include "base/status.hpp"
#include "messages/records.hpp"
#include "runner/cluster/run_setup.hpp"
#include "runner/cluster/run_summary.hpp"
#include "runner/execute_options.hpp"

namespace troupe {

struct RunResult {
  summaries::ClusterRunSummary summary;  // summary.json's message
  std::vector<JobRecord> jobs;
  std::vector<RoundRecord> rounds;
  std::vector<LeaseRecord> leases;  // with run.lease_log
  std::vector<FaultRecord> faults;  // the faults applied, when the run has any
  std::vector<LinkRecord> links;    // with a fabric
  std::vector<JobNetworkRecord> job_network;
  std::vector<JobRecoveryRecord> job_recovery;  // with faults.recovery
  // faults.stragglers.what_if: the jobs of the same run without the stragglers.
  std::vector<JobRecord> jobs_without_stragglers;
  std::vector<ServerDownRecord> servers_down;  // when servers went down
};

Status ExecuteRun(RunPlan plan, const ExecuteOptions& options, RunResult* result);

}  // namespace troupe
