// Public cluster traces that do not say what each job trained: Microsoft Philly (as preprocessed
// for the AdaptDL/Pollux artifact), SenseTime Helios, Alibaba PAI (cluster-trace-gpu-v2020, task
// table) and Shanghai AI Lab Acme (Seren and Kalos). docs/traces.md documents each mapping.
//
// Contract: a row gives a time (submission; for PAI the task's launch), a duration in seconds and
// a GPU count. Rows that hold no GPU work (CPU-only jobs, jobs or PAI tasks that never started or
// never ended) are skipped; any other row that does not parse is refused with "file:line: column
// 'x': ...". Kept rows are sorted stably by time, cut to options.max_jobs, rebased so the first
// arrives at 0 s, numbered 0..N-1 and given models in that order by ModelAssigner with the options'
// class mix; iterations = floor(duration / iter_time_s), at least 1. A row in the file is a few
// dozen bytes in memory until its job is built; the file itself is streamed, never held.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "workload/csv_input.hpp"
#include "workload/model_catalog.hpp"
#include "workload/trace_reader.hpp"
#include "messages/job_spec.hpp"

namespace troupe {

// The public format whose columns `header` has (kAutoDetect when none): Philly has timestamp and
// num_gpus; Helios submit_time, gpu_num and vc; Acme submit_time, gpu_num and end_time without
// vc; PAI's task table job_name, inst_num and plan_gpu.
TraceFormat DetectPublicFormat(const CsvHeader& header);

// Reads the rows after `header` in one of the public formats (not kTroupe or kAutoDetect).
Status ParsePublicTrace(TraceFormat format, CsvCursor* cursor, const CsvHeader& header,
                        std::string_view file, const TraceOptions& options,
                        const ModelCatalog& catalog, std::vector<JobSpec>* jobs);

}  // namespace troupe
