// Report writer: turns a finished run's records into its run directory and a stdout table.
//
// Contract:
//  - WriteRunDirectory writes summary.json, jobs.csv (one row a job, sorted by job_id) and
//    rounds.csv (one row a round, in the given order) into out_dir. It is atomic: the files go into
//    a sibling staging folder `<out_dir>.tmp-<pid>` that is renamed onto out_dir only once all of
//    them are written, replacing an existing out_dir folder (never a regular file). On failure it
//    returns IoError naming the path, removes the staging folder and leaves out_dir as it was, so a
//    failed run never leaves something that looks like a result. Missing parent folders are made.
//  - Output is deterministic: the CSVs print numbers in fixed formats independent of the locale
//    (seconds and resource amounts with 3 decimals), summary.json so that they read back
//    exactly, so the same records give the same bytes. The wall-clock fields (wall_s, events_per_s)
//    appear only in summary.json, so jobs.csv and rounds.csv of two identical emulated runs
//    compare equal.
//  - summary.json is the run's ClusterRunSummary (messages/summary.proto, its schema) printed by
//    protobuf's JSON printer (runner/summary_json.hpp).
//  - FormatSummaryTable renders a summary as a short human-readable table (JCT in hours,
//    utilisations in percent) for stdout.
#pragma once

#include <string>
#include <vector>

#include "base/status.hpp"
#include "base/status_or.hpp"
#include "messages/records.hpp"
#include "messages/summary.pb.h"
#include "runner/cluster/fabric_records.hpp"
#include "runner/cluster/run_summary.hpp"

namespace troupe {

inline constexpr char kJobsCsvHeader[] =
    "job_id,model,gpus,iterations,arrival_s,start_s,end_s,jct_s,ideal_duration_s,rounds_run,"
    "gpu_seconds,measured,profiling_points,profiling_s,wasted_gpu_s,restarts,failure";
// With a fabric, jobs.csv's rows end with these two columns (JobRecord.comm_s, contention_s).
inline constexpr char kJobsCsvNetworkColumns[] = ",comm_s,contention_s";
// With faults.recovery, jobs.csv's rows end with these (JobRecovery; seconds of the job's wall
// time: held_s is gpu_seconds / gpus plus the leases cut short; effective_ratio the productive
// share of held_s).
inline constexpr char kJobsCsvRecoveryColumns[] =
    ",checkpoints,checkpoint_s,restart_s,lost_work_s,interruptions,held_s,effective_ratio";
inline constexpr char kFaultsCsvHeader[] = "at_s,fault,effect,recovered_s";
inline constexpr char kLeasesCsvHeader[] = "round,job_id,server,gpu_ids,cpus,memory_gb";
inline constexpr char kRoundsCsvHeader[] =
    "round,start_s,end_s,gpus_allocated,cpus_allocated,memory_gb_allocated,jobs_running,"
    "jobs_queued,jobs_finished";

// `leases`, when given, is written as leases.csv (header kLeasesCsvHeader, GPU indices joined
// by ';'); `faults`, when given, as faults.csv (one row a fault applied, in order); `fabric`,
// when given, as links.csv, and jobs.csv gains kJobsCsvNetworkColumns; `recovery`, when given,
// makes jobs.csv end with kJobsCsvRecoveryColumns (a job without a record: all 0).
Status WriteRunDirectory(const std::string& out_dir, const summaries::ClusterRunSummary& summary,
                         const std::vector<JobRecord>& jobs, const std::vector<RoundRecord>& rounds,
                         const std::vector<LeaseRecord>* leases = nullptr,
                         const std::vector<FaultRecord>* faults = nullptr,
                         const FabricOutput* fabric = nullptr,
                         const std::vector<JobRecoveryRecord>* recovery = nullptr);

// The CSV files' contents, as WriteRunDirectory writes them (summary.json is
// PrintSummaryJson(summary), runner/summary_json.hpp).
std::string JobsCsv(const std::vector<JobRecord>& jobs);
std::string RoundsCsv(const std::vector<RoundRecord>& rounds);
std::string LeasesCsv(const std::vector<LeaseRecord>& leases);
std::string FaultsCsv(const std::vector<FaultRecord>& faults);

std::string FormatSummaryTable(const summaries::ClusterRunSummary& summary);

}  // namespace troupe
