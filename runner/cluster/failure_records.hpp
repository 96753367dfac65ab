// What server failures cost a cluster run (docs/failures.md, "What failures cost"): each server
// that went down, with its cause and the jobs it interrupted, as interruptions.csv, and the same
// added up by cause as summary.json's `failures`.
#pragma once

#include <string>
#include <vector>

#include "base/status.hpp"
#include "messages/records.hpp"
#include "messages/summary.pb.h"

namespace troupe {

inline constexpr char kInterruptionsCsvHeader[] =
    "at_s,server,gpus,cause,repaired_s,jobs_hit,job_gpus_hit";

// One row a server that went down, in the order they went down; repaired_s is -1 for a server
// that never came back.
std::string InterruptionsCsv(const std::vector<ServerDownRecord>& downs);

// Sets summary->failures from `downs` (nothing when empty). A server still down at `end_s`, the
// run's end, counts as under repair until then.
void SummarizeFailures(const std::vector<ServerDownRecord>& downs, double end_s,
                       summaries::ClusterRunSummary* summary);

// Writes interruptions.csv into the run's staging folder (run_directory.hpp's StageFile).
Status StageInterruptionsCsv(const std::string& out_dir,
                             const std::vector<ServerDownRecord>& downs);

}  // namespace troupe
