#include "workload/trace_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <unordered_map>
#include <utility>

#include "base/input_file.hpp"
#include "base/quoted.hpp"
#include "base/status_macros.hpp"
#include "workload/csv_input.hpp"
#include "workload/philly_job_log.hpp"
#include "workload/public_traces.hpp"
#include "workload/trace_fields.hpp"

namespace troupe {
namespace {

void SortAndTruncate(int64_t max_jobs, std::vector<JobSpec>* jobs) {
  std::stable_sort(jobs->begin(), jobs->end(), [](const JobSpec& a, const JobSpec& b) {
    if (a.arrival_s != b.arrival_s) return a.arrival_s < b.arrival_s;
    return a.job_id < b.job_id;
  });
  if (max_jobs > 0 && static_cast<size_t>(max_jobs) < jobs->size()) jobs->resize(max_jobs);
}

// ---- troupe format ----

struct TroupeColumns {
  int job_id = -1, model = -1, arrival = -1, iterations = -1, duration = -1, gpus = -1;
};

Status FindTroupeColumns(const CsvHeader& header, std::string_view file, TroupeColumns* col) {
  RETURN_IF_ERROR(header.Require("job_id", file, &col->job_id));
  RETURN_IF_ERROR(header.Require("model", file, &col->model));
  RETURN_IF_ERROR(header.Require("arrival_s", file, &col->arrival));
  RETURN_IF_ERROR(header.Require("gpus", file, &col->gpus));
  col->iterations = header.Find("iterations");
  col->duration = header.Find("duration_s");
  std::string where = std::string(file) + ":" + std::to_string(header.line_number()) + ": ";
  if (col->iterations >= 0 && col->duration >= 0) {
    return Status::InvalidInput(where + "header has both 'iterations' and 'duration_s'; " +
                                "give the length of a job one way only");
  }
  if (col->iterations < 0 && col->duration < 0) {
    return Status::InvalidInput(where + "header has no column 'iterations' (or 'duration_s')" +
                                " (found: " + header.Joined() + ")");
  }
  return Status::Ok();
}

// The job's length, from whichever of iterations and duration_s the header has.
Status ParseLength(const CsvLine& line, const TroupeColumns& col, std::string_view file,
                   const ModelProfile& model, int64_t* iterations) {
  if (col.iterations >= 0) {
    Status status =
        ParseInt64Field(line.fields[col.iterations], file, line.number, "iterations", iterations);
    // At most what the model runs in kMaxTraceSeconds at its reference speed.
    const double most = std::max(1.0, std::floor(kMaxTraceSeconds / model.iter_time_s));
    if (status.ok()) {
      status = CheckFieldRange(static_cast<double>(*iterations), 1, most,
                               line.fields[col.iterations], file, line.number, "iterations");
    }
    return status;
  }
  double duration = 0;
  Status status =
      ParseDoubleField(line.fields[col.duration], file, line.number, "duration_s", &duration);
  if (status.ok() && !(duration > 0)) {
    return FieldError(file, line.number, "duration_s",
                      "must be positive, got " + std::string(line.fields[col.duration]));
  }
  if (status.ok()) {
    status = CheckFieldRange(duration, 0, kMaxTraceSeconds, line.fields[col.duration], file,
                             line.number, "duration_s");
  }
  if (status.ok()) *iterations = IterationsFor(duration, model);
  return status;
}

Status ParseTroupeRow(const CsvLine& line, const TroupeColumns& col, std::string_view file,
                      const ModelCatalog& catalog, JobSpec* job) {
  job->source_line = line.number;
  Status status =
      ParseInt64Field(line.fields[col.job_id], file, line.number, "job_id", &job->job_id);
  if (status.ok()) {
    status = CheckFieldRange(static_cast<double>(job->job_id), 0, kMaxTraceJobId,
                             line.fields[col.job_id], file, line.number, "job_id");
  }
  std::string_view model_name = line.fields[col.model];
  const ModelProfile* model = catalog.Find(model_name);
  if (status.ok() && model == nullptr) {
    return FieldError(file, line.number, "model", catalog.UnknownModel(model_name));
  }
  if (status.ok()) job->model = model->name;
  if (status.ok()) {
    status =
        ParseDoubleField(line.fields[col.arrival], file, line.number, "arrival_s", &job->arrival_s);
  }
  if (status.ok()) {
    status = CheckFieldRange(job->arrival_s, 0, kMaxTraceSeconds, line.fields[col.arrival], file,
                             line.number, "arrival_s");
  }
  if (status.ok()) status = ParseLength(line, col, file, *model, &job->iterations);
  if (status.ok())
    status = ParseGpusField(line.fields[col.gpus], file, line.number, "gpus", &job->gpus);
  return status;
}

Status ParseTroupe(CsvCursor* cursor, const CsvHeader& header, std::string_view file,
                   const ModelCatalog& catalog, std::vector<JobSpec>* jobs) {
  TroupeColumns col;
  Status status = FindTroupeColumns(header, file, &col);
  std::unordered_map<int64_t, int64_t> line_of_id;
  CsvLine line;
  while (status.ok() && cursor->Next(&line)) {
    status = header.CheckWidth(line, file);
    JobSpec job;
    if (status.ok()) status = ParseTroupeRow(line, col, file, catalog, &job);
    if (!status.ok()) break;
    auto [it, inserted] = line_of_id.emplace(job.job_id, line.number);
    if (!inserted) {
      return FieldError(file, line.number, "job_id",
                        "duplicate job id " + std::to_string(job.job_id) + " (first on line " +
                            std::to_string(it->second) + ")");
    }
    jobs->push_back(std::move(job));
  }
  return status;
}

Status DetectFormat(const CsvHeader& header, std::string_view file, TraceFormat* format) {
  // troupe's own columns first: a troupe trace may carry any other column beside them.
  if (header.Find("job_id") >= 0 && header.Find("model") >= 0) {
    *format = TraceFormat::kTroupe;
  } else if ((*format = DetectPublicFormat(header)) != TraceFormat::kAutoDetect) {
    return Status::Ok();
  } else if (header.Find("job_id") >= 0) {
    *format = TraceFormat::kTroupe;
  } else {
    return Status::InvalidInput(
        std::string(file) + ":" + std::to_string(header.line_number()) +
        ": cannot tell the trace format from the header " + Quoted(header.Joined()) +
        " (expected troupe's job_id,model,arrival_s,iterations,gpus, Philly's "
        "timestamp,duration,num_gpus, Helios's submit_time,duration,gpu_num,vc, Acme's "
        "submit_time,duration,gpu_num, PAI's job_name,inst_num,plan_gpu,... or Philly's job log, "
        "JSON)");
  }
  return Status::Ok();
}

Status CheckMaxJobs(std::string_view name, const TraceOptions& options) {
  if (options.max_jobs >= 0) return Status::Ok();
  return Status::InvalidInput(std::string(name) + ": max_jobs must not be negative, got " +
                              std::to_string(options.max_jobs));
}

// workload.replay_job_failures needs a trace that records how its jobs ended.
Status CheckRecordsFailures(TraceFormat format, std::string_view name,
                            const TraceOptions& options) {
  if (!options.replay_job_failures) return Status::Ok();
  if (format != TraceFormat::kTroupe && format != TraceFormat::kPhilly) return Status::Ok();
  return Status::InvalidInput(
      std::string(name) + ": workload.replay_job_failures: " +
      (format == TraceFormat::kTroupe ? "a troupe trace" : "Philly's summary trace") +
      " records no job failures; replay a trace that does (helios, acme, alibaba_pai, "
      "philly_job_log)");
}

// A JSON trace (Philly's job log) starts with '[' or '{', whitespace aside.
bool LooksLikeJson(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '[' || text[first] == '{');
}

bool FileLooksLikeJson(std::FILE* file) {
  int c = 0;
  while ((c = std::fgetc(file)) == ' ' || c == '\t' || c == '\r' || c == '\n') {
  }
  std::rewind(file);  // a regular file (OpenInputFile)
  return c == '[' || c == '{';
}

// Philly's job log from `file` or, when it is null, `text`.
Status ParseJson(std::FILE* file, std::string_view text, std::string_view name,
                 const TraceOptions& options, const ModelCatalog& catalog,
                 std::vector<JobSpec>* jobs) {
  jobs->clear();
  Status status = CheckMaxJobs(name, options);
  if (status.ok()) status = ParsePhillyJobLog(file, text, name, options, catalog, jobs);
  if (!status.ok()) {
    jobs->clear();
    return status;
  }
  SortAndTruncate(options.max_jobs, jobs);
  return Status::Ok();
}

bool IsJson(const TraceOptions& options, bool looks_like_json) {
  return options.format == TraceFormat::kPhillyJobLog ||
         (options.format == TraceFormat::kAutoDetect && looks_like_json);
}

// Reads a whole trace from `cursor`, whichever way it holds the text.
Status ParseFromCursor(CsvCursor* cursor, std::string_view name, const TraceOptions& options,
                       const ModelCatalog& catalog, std::vector<JobSpec>* jobs) {
  jobs->clear();
  RETURN_IF_ERROR(CheckMaxJobs(name, options));
  CsvLine first;
  if (!cursor->Next(&first)) {
    if (!cursor->status().ok()) return cursor->status();
    return Status::InvalidInput(std::string(name) + ": empty trace");
  }
  CsvHeader header;
  Status status = header.Parse(first, name);
  TraceFormat format = options.format;
  if (status.ok() && format == TraceFormat::kAutoDetect) {
    status = DetectFormat(header, name, &format);
  }
  if (status.ok()) status = CheckRecordsFailures(format, name, options);
  if (status.ok()) {
    status = format == TraceFormat::kTroupe
                 ? ParseTroupe(cursor, header, name, catalog, jobs)
                 : ParsePublicTrace(format, cursor, header, name, options, catalog, jobs);
  }
  if (status.ok()) status = cursor->status();
  if (!status.ok()) {
    jobs->clear();
    return status;
  }
  SortAndTruncate(options.max_jobs, jobs);
  return Status::Ok();
}

}  // namespace

Status ParseTrace(std::string_view text, std::string_view name, const TraceOptions& options,
                  const ModelCatalog& catalog, std::vector<JobSpec>* jobs) {
  if (IsJson(options, LooksLikeJson(text))) {
    return ParseJson(nullptr, text, name, options, catalog, jobs);
  }
  CsvCursor cursor(text);
  return ParseFromCursor(&cursor, name, options, catalog, jobs);
}

Status ReadTrace(const std::string& path, const TraceOptions& options, const ModelCatalog& catalog,
                 std::vector<JobSpec>* jobs) {
  jobs->clear();
  // An input the user named that cannot be read (missing, a directory, no permission, a FIFO) is
  // bad input: the user fixes the path.
  InputFile file;
  RETURN_IF_ERROR(OpenInputFile(path, options.field, &file));
  if (IsJson(options, FileLooksLikeJson(file.get()))) {
    return ParseJson(file.get(), {}, path, options, catalog, jobs);
  }
  CsvCursor cursor(file.get(), path);
  return ParseFromCursor(&cursor, path, options, catalog, jobs);
}

Status OpenTraceSource(const std::string& path, const TraceOptions& options,
                       const ModelCatalog& catalog, std::unique_ptr<JobSource>* source) {
  std::vector<JobSpec> jobs;
  RETURN_IF_ERROR(ReadTrace(path, options, catalog, &jobs));
  std::string name = std::filesystem::path(path).filename().string();
  *source = std::make_unique<VectorJobSource>(std::move(jobs), "trace " + name);
  return Status::Ok();
}

}  // namespace troupe
