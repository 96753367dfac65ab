// Microsoft Philly's job log (cluster_job_log of msr-fiddle/philly-traces): a JSON list of jobs,
// each with "jobid", "user", "vc", "submitted_time", "status" (Pass, Killed or Failed) and
// "attempts", each attempt {"start_time", "end_time", "detail": [{"ip", "gpus": [...]}]}.
// docs/traces.md documents the mapping.
//
// Contract: a job arrives at its submitted_time, holds the GPUs its first attempt's detail lists,
// and runs for its last attempt's run time (end_time - start_time). A job that holds no GPU work
// is skipped: no attempt, no GPU in the first attempt, a first attempt that never started or a
// last attempt that never ended (a time that is empty, null or "None"). With
// options.replay_job_failures a job keeps the run times of its attempts before the last
// (JobSpec.crashed_attempts_s; an attempt without both times is left out) and, when its status is
// Failed, TraceEnd::kFailed. Jobs are then built as the other public traces' (BuildTraceJobs):
// sorted by arrival, rebased, numbered, given models by the class mix.
//
// The file is parsed as it streams, one job held at a time. A top-level object is read as a list
// of one job. Bad input is one InvalidInput line naming the file and where: the parser's line and
// column for a syntax error, else the job's place in the list, its jobid and the field
// ("log.json: job 3 (jobid 'application_1'): attempt 2: 'end_time' is not a 'YYYY-MM-DD
// HH:MM:SS' time: 'x'"). JobSpec.source_line is the job's place in the list, from 1.
#pragma once

#include <cstdio>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "messages/job_spec.hpp"
#include "workload/model_catalog.hpp"
#include "workload/trace_reader.hpp"

namespace troupe {

// Reads the job log from `file` (its current position) or, when `file` is null, from `text`;
// `name` names it in messages.
Status ParsePhillyJobLog(std::FILE* file, std::string_view text, std::string_view name,
                         const TraceOptions& options, const ModelCatalog& catalog,
                         std::vector<JobSpec>* jobs);

}  // namespace troupe
