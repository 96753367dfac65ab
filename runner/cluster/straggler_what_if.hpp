// The stragglers' what-if replay (faults.stragglers.what_if, docs/failures.md "Stragglers"): the
// same run again without its slow episodes, and what they cost each job.
//
// Contract: PlanWithoutStragglers, with what_if set, plans the config with its stragglers block
// removed — the same seed, workload and other faults — as plan->without_stragglers (no output
// folder), so that it is checked with the run before anything runs; otherwise it does nothing.
// The replay is the run a config without the block makes: the same records, byte for byte.
// StragglersCsv pairs the two runs' jobs by job_id (the rows sorted by it): a job that did not
// finish in a run has an empty JCT there and no difference. SummarizeStragglers adds up the
// differences over the jobs that finished in both. Neither touches a run without what_if.
#pragma once

#include <string>
#include <vector>

#include "base/status.hpp"
#include "config/config.pb.h"
#include "messages/records.hpp"
#include "messages/summary.pb.h"
#include "runner/cluster/run_setup.hpp"

namespace troupe {

inline constexpr char kStragglersCsvHeader[] = "job_id,jct_s,jct_without_stragglers_s,difference_s";

Status PlanWithoutStragglers(const config::RunConfig& cfg, const std::string& config_name,
                             RunPlan* plan);

std::string StragglersCsv(const std::vector<JobRecord>& with,
                          const std::vector<JobRecord>& without);

// The slow faults applied that stragglers became (cause "straggler:..."): those before the run
// ended.
int32_t CountStragglerFaults(const std::vector<FaultRecord>& faults);

// Stages stragglers.csv in out_dir's staging folder (runner/run_directory.hpp).
Status StageStragglersCsv(const std::string& out_dir, const std::vector<JobRecord>& with,
                          const std::vector<JobRecord>& without);

// `slow_faults`: CountStragglerFaults of the run.
void SummarizeStragglers(const std::vector<JobRecord>& with, const std::vector<JobRecord>& without,
                         int32_t slow_faults, summaries::ClusterRunSummary* summary);

}  // namespace troupe
