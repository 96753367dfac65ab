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
//
// With options.replay_job_failures the state column (Helios's and Acme's `state`, PAI's `status`)
// is read too, and a job the trace records as failed carries it (JobSpec.trace_end).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "messages/job_spec.hpp"
#include "workload/csv_input.hpp"
#include "workload/model_catalog.hpp"
#include "workload/trace_reader.hpp"

namespace troupe {

// One kept row, before it has a model: a few dozen bytes whatever the width of the file's line.
struct TimedRow {
  double time_s = 0;  // seconds on the trace's own clock
  double duration_s = 0;
  int64_t line = 0;  // its line in the file (Philly's job log: its place in the list, from 1)
  int32_t gpus = 1;
  // PAI names the GPU type of each task; it is read, then dropped when the job is built: jobs do
  // not carry a GPU type yet, and a server group has one kind of GPU.
  int32_t gpu_type = -1;  // index into the reader's GPU type names, -1 when the format has none
  int32_t attempts = -1;  // Philly's job log: index into BuildTraceJobs' crashed_attempts
  TraceEnd end = TraceEnd::kNone;
};

// Sorted stably by time, cut to max_jobs, rebased and given models: the jobs of the run.
// `crashed_attempts` holds the attempts rows point to (JobSpec.crashed_attempts_s); `time_column`
// names the time in the refusal of a trace longer than kMaxTraceSeconds.
Status BuildTraceJobs(std::vector<TimedRow> rows, std::vector<std::vector<double>> crashed_attempts,
                      std::string_view file, std::string_view time_column,
                      const TraceOptions& options, const ModelCatalog& catalog,
                      std::vector<JobSpec>* jobs);

// The failure a state of the trace names (Slurm's FAILED, NODE_FAIL, OUT_OF_MEMORY; Philly's and
// PAI's Failed), kNone for any other.
TraceEnd TraceEndOf(std::string_view state);

// The public format whose columns `header` has (kAutoDetect when none): Philly has timestamp and
// num_gpus; Helios submit_time, gpu_num and vc; Acme submit_time, gpu_num and end_time without
// vc; PAI's task table job_name, inst_num and plan_gpu.
TraceFormat DetectPublicFormat(const CsvHeader& header);

// Reads the rows after `header` in one of the public formats (not kTroupe or kAutoDetect).
Status ParsePublicTrace(TraceFormat format, CsvCursor* cursor, const CsvHeader& header,
                        std::string_view file, const TraceOptions& options,
                        const ModelCatalog& catalog, std::vector<JobSpec>* jobs);

}  // namespace troupe
