// The run directory and the stdout table of a parameter-server run (ps_run.hpp).
//
//  - WritePsRunDirectory writes summary.json (the run's PsRunSummary, messages/summary.proto,
//    printed by runner/summary_json.hpp) and
//    batches.csv (one row a global step, header kPsBatchesCsvHeader) into out_dir, atomically:
//    into the sibling staging folder `<out_dir>.tmp-<pid>`, renamed onto out_dir (replacing a
//    folder there) only once both are written. On failure: IoError naming the path, the staging
//    folder removed, out_dir as it was. With faults, faults.csv too (what each fault did).
//  - Numbers are printed locale-independently (batches.csv with 9 significant digits, summary.json
//    so that they read back exactly), so the same records give the same bytes; the wall-clock
//    fields (wall_s, examples_per_s_wall) appear only in summary.json, so batches.csv of two
//    identical emulated runs compare equal.
#pragma once

#include <string>
#include <vector>

#include "base/status.hpp"
#include "base/status_or.hpp"
#include "messages/summary.pb.h"
#include "runner/ps/ps_run.hpp"

namespace troupe {

inline constexpr char kPsBatchesCsvHeader[] =
    "batch,loss,batch_time_s,end_s,read_s,partition_s,ssd_s,train_s,pull_s,gpu_s,push_s,"
    "allreduce_s,keys,hbm_hits,mem_keys,mem_hits,mem_hit_rate,cache_hit_rate,ssd_rows_read,"
    "rows_created,"
    "disk_bytes,net_bytes,ssd_bytes_read,ssd_bytes_written,compaction_bytes,bytes_moved,mem_rows,"
    "ssd_keys";

// With `faults` (a run with a faults block), also faults.csv (header kPsFaultsCsvHeader): one row
// a PsFaultRecord.
Status WritePsRunDirectory(const std::string& out_dir, const summaries::PsRunSummary& summary,
                           const std::vector<PsBatchRecord>& batches,
                           const std::vector<PsFaultRecord>* faults = nullptr);

inline constexpr char kPsFaultsCsvHeader[] = "at_s,node,fault,event,step,count,detail";
std::string PsFaultsCsv(const std::vector<PsFaultRecord>& faults);

std::string PsBatchesCsv(const std::vector<PsBatchRecord>& batches);

// A short table for stdout: throughput, AUC, loss, hit rates per tier, bytes moved, stage times.
std::string FormatPsSummaryTable(const summaries::PsRunSummary& summary);

}  // namespace troupe
