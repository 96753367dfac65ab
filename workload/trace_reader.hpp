// Reading job traces: troupe's own CSV and the public Philly, Helios, Alibaba PAI and Acme traces.
//
// Contract: ReadTrace streams a trace file line by line into job specs (the file is never held
// whole: a trace of millions of rows costs its jobs, not its text) and returns its jobs sorted by
// (arrival_s, job_id), keeping the first options.max_jobs of them when that is positive. Every
// job names a model of `catalog`.
//
// troupe format: a header naming, in any order, job_id, model, arrival_s, gpus and either
// iterations or duration_s (seconds at the GPU-proportional share, turned into
// floor(duration_s / iter_time_s) iterations, at least 1). Other columns are ignored. Blank lines
// and lines starting with '#' are skipped. JobSpec.source_line is the job's line in the file (every
// format).
//
// Public formats (public_traces.hpp): Philly's timestamp,duration,num_gpus,...; Helios's and
// Acme's submit_time,duration,gpu_num,...; PAI's task table start_time,end_time,inst_num,
// plan_gpu,gpu_type,.... Rows are sorted stably by time, arrivals rebased so the earliest is 0,
// job ids are 0..N-1 in that order, and models are assigned in that order by ModelAssigner with
// the options' class mix (so the first N jobs get the same models whatever max_jobs is).
//
// Philly's job log (philly_job_log.hpp) is JSON: a list of jobs with their attempts.
//
// options.replay_job_failures keeps how the trace says each job ended (JobSpec.trace_end) and
// Philly's attempts before the last (JobSpec.crashed_attempts_s); a format that records no
// failures (troupe's, Philly's summary CSV) is then refused.
//
// kAutoDetect picks the format from the first character (JSON: '[' or '{') or the header. Bad input
// is one InvalidInput line naming the file, line and column ("traces/x.csv:17: column 'gpus': not a
// number: 'abc'"); so is a file that cannot be read, one that is not a regular file (a FIFO,
// /dev/zero: named with options.field) and a line longer than 1 MiB (base/input_file.hpp). On error
// *jobs is left empty.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "messages/job_spec.hpp"
#include "workload/job_source.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {

// The values match config.proto's TraceFormat.
enum class TraceFormat {
  kAutoDetect,
  kTroupe,
  kPhilly,
  kHelios,
  kAlibabaPai,
  kAcme,
  kPhillyJobLog
};

struct TraceOptions {
  TraceFormat format = TraceFormat::kAutoDetect;
  int64_t max_jobs = 0;  // 0 = all
  // The class mix for formats that do not name models (the public traces).
  double image_percent = 20, language_percent = 70, speech_percent = 10;
  // What names the file in the refusal of one that is not a regular file.
  std::string field = "trace file";
  // workload.replay_job_failures: read the trace's job failures and attempts.
  bool replay_job_failures = false;
};

Status ReadTrace(const std::string& path, const TraceOptions& options, const ModelCatalog& catalog,
                 std::vector<JobSpec>* jobs);

// As ReadTrace, for a trace already in memory; `name` stands for the file in messages.
Status ParseTrace(std::string_view text, std::string_view name, const TraceOptions& options,
                  const ModelCatalog& catalog, std::vector<JobSpec>* jobs);

// ReadTrace wrapped as a JobSource described as "trace <file name> (<N> jobs)".
Status OpenTraceSource(const std::string& path, const TraceOptions& options,
                       const ModelCatalog& catalog, std::unique_ptr<JobSource>* source);

}  // namespace troupe
