#include "workload/public_traces.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/quoted.hpp"
#include "base/status_macros.hpp"
#include "workload/model_assigner.hpp"
#include "workload/trace_fields.hpp"

namespace troupe {
namespace {

// The columns a format needs, in the order its row parser expects them.
std::vector<std::string_view> ColumnsOf(TraceFormat format) {
  switch (format) {
    case TraceFormat::kPhilly:
      return {"timestamp", "duration", "num_gpus"};
    case TraceFormat::kHelios:
      return {"submit_time", "duration", "gpu_num"};
    case TraceFormat::kAcme:
      return {"submit_time", "gpu_num", "start_time", "end_time"};
    case TraceFormat::kAlibabaPai:
      return {"start_time", "end_time", "inst_num", "plan_gpu", "gpu_type"};
    default:
      return {};
  }
}

// Looks a std::string key up by a string_view without making a string of it.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
};

// The column that says how a job ended, read when failures are replayed ("" : none).
std::string_view StateColumnOf(TraceFormat format) {
  switch (format) {
    case TraceFormat::kHelios:
    case TraceFormat::kAcme:
      return "state";
    case TraceFormat::kAlibabaPai:
      return "status";
    default:
      return "";
  }
}

struct RowReader {
  TraceFormat format;
  std::string_view file;
  std::vector<std::string_view> names;  // ColumnsOf(format)
  std::vector<int> col;                 // where each of `names` is in a line
  int state_col = -1;                   // with replay_job_failures: StateColumnOf(format)
  std::vector<std::string> gpu_types;   // distinct GPU type names, in order of first appearance
  // Each of gpu_types' index: a row's type is found in one look-up, not by a walk of all of them
  // (a trace naming thousands of types took minutes).
  std::unordered_map<std::string, int32_t, NameHash, std::equal_to<>> gpu_type_index;

  std::string_view Field(const CsvLine& line, size_t i) const { return line.fields[col[i]]; }
  std::string_view Column(size_t i) const { return names[i]; }

  // Fills *row; *keep is false for a row without GPU work.
  Status Read(const CsvLine& line, TimedRow* row, bool* keep);
  Status ReadPhilly(const CsvLine& line, TimedRow* row);
  Status ReadHelios(const CsvLine& line, TimedRow* row, bool* keep);
  Status ReadAcme(const CsvLine& line, TimedRow* row, bool* keep);
  Status ReadTime(const CsvLine& line, size_t i, ZoneOffset offset, int64_t* seconds);
  Status ReadPaiTask(const CsvLine& line, TimedRow* row, bool* keep);
  Status ReadPaiTimes(const CsvLine& line, TimedRow* row, bool* keep);
  int32_t GpuTypeIndex(std::string_view name);
};

Status RowReader::Read(const CsvLine& line, TimedRow* row, bool* keep) {
  row->line = line.number;
  *keep = true;
  if (state_col >= 0) row->end = TraceEndOf(line.fields[state_col]);
  switch (format) {
    case TraceFormat::kPhilly:
      return ReadPhilly(line, row);
    case TraceFormat::kAlibabaPai:
      return ReadPaiTask(line, row, keep);
    case TraceFormat::kAcme:
      return ReadAcme(line, row, keep);
    default:
      return ReadHelios(line, row, keep);
  }
}

Status RowReader::ReadTime(const CsvLine& line, size_t i, ZoneOffset offset, int64_t* seconds) {
  if (ParseDateTime(Field(line, i), offset, seconds)) return Status::Ok();
  const char* shape =
      offset == ZoneOffset::kOptional ? "'YYYY-MM-DD HH:MM:SS[+HH:MM]'" : "'YYYY-MM-DD HH:MM:SS'";
  return FieldError(file, line.number, Column(i),
                    std::string("not a ") + shape + " time: " + Quoted(Field(line, i)));
}

Status RowReader::ReadPhilly(const CsvLine& line, TimedRow* row) {
  int64_t time_s = 0;
  Status status = ReadTime(line, 0, ZoneOffset::kNone, &time_s);
  row->time_s = static_cast<double>(time_s);
  if (status.ok()) {
    status = ParseDurationField(Field(line, 1), file, line.number, Column(1), &row->duration_s);
  }
  if (status.ok())
    status = ParseGpusField(Field(line, 2), file, line.number, Column(2), &row->gpus);
  return status;
}

// Helios: submit_time, duration (s) and gpu_num; gpu_num 0 is a CPU job.
Status RowReader::ReadHelios(const CsvLine& line, TimedRow* row, bool* keep) {
  int64_t time_s = 0;
  Status status = ReadTime(line, 0, ZoneOffset::kNone, &time_s);
  row->time_s = static_cast<double>(time_s);
  if (status.ok()) {
    status = ParseDurationField(Field(line, 1), file, line.number, Column(1), &row->duration_s);
  }
  if (status.ok() && Field(line, 2) == "0") {
    *keep = false;
    return Status::Ok();
  }
  if (status.ok())
    status = ParseGpusField(Field(line, 2), file, line.number, Column(2), &row->gpus);
  return status;
}

// Acme: submit_time and gpu_num (0: a CPU job); the run time is end_time - start_time, as the
// publisher defines `duration` (Kalos's `duration` column also counts the time queued). A job
// without a start or an end (cancelled while queued) never ran.
Status RowReader::ReadAcme(const CsvLine& line, TimedRow* row, bool* keep) {
  int64_t submit = 0, start = 0, end = 0;
  Status status = ReadTime(line, 0, ZoneOffset::kOptional, &submit);
  row->time_s = static_cast<double>(submit);
  if (status.ok() && Field(line, 1) == "0") {
    *keep = false;
    return Status::Ok();
  }
  if (status.ok())
    status = ParseGpusField(Field(line, 1), file, line.number, Column(1), &row->gpus);
  if (status.ok() && (Field(line, 2).empty() || Field(line, 3).empty())) {
    *keep = false;
    return Status::Ok();
  }
  if (status.ok()) status = ReadTime(line, 2, ZoneOffset::kOptional, &start);
  if (status.ok()) status = ReadTime(line, 3, ZoneOffset::kOptional, &end);
  if (status.ok() && (end < start || end - start > kMaxTraceSeconds)) {
    return FieldError(file, line.number, Column(3),
                      "must be in [start_time, start_time + 1e9 s], got " +
                          std::string(Field(line, 3)) + " (start_time " +
                          std::string(Field(line, 2)) + ")");
  }
  row->duration_s = static_cast<double>(end - start);
  return status;
}

int32_t RowReader::GpuTypeIndex(std::string_view name) {
  if (auto it = gpu_type_index.find(name); it != gpu_type_index.end()) return it->second;
  const auto index = static_cast<int32_t>(gpu_types.size());
  gpu_types.emplace_back(name);
  gpu_type_index.emplace(gpu_types.back(), index);
  return index;
}

// PAI's start_time and end_time (s); empty or 0 means the task never launched or never ended.
Status RowReader::ReadPaiTimes(const CsvLine& line, TimedRow* row, bool* keep) {
  double start = 0, end = 0;
  for (size_t i : {size_t{0}, size_t{1}}) {
    std::string_view text = Field(line, i);
    if (text.empty() || text == "0" || text == "0.0") {
      *keep = false;
      return Status::Ok();
    }
    double* value = i == 0 ? &start : &end;
    RETURN_IF_ERROR(ParseDurationField(text, file, line.number, Column(i), value));
  }
  if (end < start) {
    return FieldError(file, line.number, Column(1),
                      "the task ends (" + std::string(Field(line, 1)) + ") before it starts (" +
                          std::string(Field(line, 0)) + ")");
  }
  row->time_s = start;
  row->duration_s = end - start;
  return Status::Ok();
}

// PAI's task table: plan_gpu is a percentage of one GPU per instance (50 = half a GPU), so the
// task holds inst_num * plan_gpu / 100 GPUs, rounded up to whole GPUs.
Status RowReader::ReadPaiTask(const CsvLine& line, TimedRow* row, bool* keep) {
  std::string_view plan_gpu = Field(line, 3);
  double percent = 0, instances = 0;
  if (!plan_gpu.empty()) {
    RETURN_IF_ERROR(ParseDoubleField(plan_gpu, file, line.number, Column(3), &percent));
  }
  RETURN_IF_ERROR(CheckFieldRange(percent, 0, 100.0 * kMaxTraceJobGpus, plan_gpu, file, line.number,
                                  Column(3)));
  RETURN_IF_ERROR(ParseDoubleField(Field(line, 2), file, line.number, Column(2), &instances));
  if (instances != std::floor(instances) || instances < 1) {
    return FieldError(file, line.number, Column(2),
                      "not a whole number >= 1: " + Quoted(Field(line, 2)));
  }
  if (percent == 0) {  // a CPU task (a parameter server, say)
    *keep = false;
    return Status::Ok();
  }
  const double gpus = std::ceil(instances * percent / 100);
  if (gpus > kMaxTraceJobGpus) {
    return FieldError(
        file, line.number, Column(3),
        "inst_num * plan_gpu / 100 is more than " + std::to_string(kMaxTraceJobGpus) + " GPUs");
  }
  row->gpus = static_cast<int32_t>(gpus);
  row->gpu_type = GpuTypeIndex(Field(line, 4));
  return ReadPaiTimes(line, row, keep);
}

}  // namespace

Status BuildTraceJobs(std::vector<TimedRow> rows, std::vector<std::vector<double>> crashed_attempts,
                      std::string_view file, std::string_view time_column,
                      const TraceOptions& options, const ModelCatalog& catalog,
                      std::vector<JobSpec>* jobs) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TimedRow& a, const TimedRow& b) { return a.time_s < b.time_s; });
  if (options.max_jobs > 0 && static_cast<size_t>(options.max_jobs) < rows.size()) {
    rows.resize(options.max_jobs);
    rows.shrink_to_fit();
  }
  if (!rows.empty() && rows.back().time_s - rows.front().time_s > kMaxTraceSeconds) {
    return FieldError(
        file, rows.back().line, time_column,
        "more than " + FormatNumber(kMaxTraceSeconds) + " s after the trace's first job");
  }
  ModelAssigner assigner(catalog, options.image_percent, options.language_percent,
                         options.speech_percent);
  jobs->reserve(rows.size());
  for (const TimedRow& row : rows) {
    const ModelProfile& model = assigner.Next();
    JobSpec job;
    job.job_id = static_cast<int64_t>(jobs->size());
    job.model = model.name;
    job.gpus = row.gpus;
    job.iterations = IterationsFor(row.duration_s, model);
    job.arrival_s = row.time_s - rows.front().time_s;
    job.source_line = row.line;
    job.trace_end = row.end;
    if (row.attempts >= 0) {
      job.crashed_attempts_s = std::move(crashed_attempts[static_cast<size_t>(row.attempts)]);
    }
    jobs->push_back(std::move(job));
  }
  return Status::Ok();
}

TraceEnd TraceEndOf(std::string_view state) {
  if (state == "FAILED") return TraceEnd::kSlurmFailed;
  if (state == "NODE_FAIL") return TraceEnd::kSlurmNodeFail;
  if (state == "OUT_OF_MEMORY") return TraceEnd::kSlurmOutOfMemory;
  if (state == "Failed") return TraceEnd::kFailed;
  return TraceEnd::kNone;
}

TraceFormat DetectPublicFormat(const CsvHeader& header) {
  auto has = [&](std::string_view name) { return header.Find(name) >= 0; };
  if (has("timestamp") && has("num_gpus")) return TraceFormat::kPhilly;
  if (has("submit_time") && has("gpu_num") && has("vc")) return TraceFormat::kHelios;
  if (has("submit_time") && has("gpu_num") && has("end_time")) return TraceFormat::kAcme;
  if (has("job_name") && has("inst_num") && has("plan_gpu")) return TraceFormat::kAlibabaPai;
  return TraceFormat::kAutoDetect;
}

Status ParsePublicTrace(TraceFormat format, CsvCursor* cursor, const CsvHeader& header,
                        std::string_view file, const TraceOptions& options,
                        const ModelCatalog& catalog, std::vector<JobSpec>* jobs) {
  Status status =
      ModelAssigner::ValidateMix(catalog, options.image_percent, options.language_percent,
                                 options.speech_percent, std::string(file) + ": trace options");
  RowReader reader{format, file, ColumnsOf(format), {}, -1, {}, {}};
  reader.col.resize(reader.names.size());
  for (size_t i = 0; status.ok() && i < reader.names.size(); ++i) {
    status = header.Require(reader.names[i], file, &reader.col[i]);
  }
  if (status.ok() && options.replay_job_failures) {
    status = header.Require(StateColumnOf(format), file, &reader.state_col);
  }
  std::vector<TimedRow> rows;
  CsvLine line;
  while (status.ok() && cursor->Next(&line)) {
    status = header.CheckWidth(line, file);
    TimedRow row;
    bool keep = false;
    if (status.ok()) status = reader.Read(line, &row, &keep);
    if (status.ok() && keep) rows.push_back(row);
  }
  if (status.ok()) status = cursor->status();
  if (!status.ok()) return status;
  return BuildTraceJobs(std::move(rows), {}, file, reader.names[0], options, catalog, jobs);
}

}  // namespace troupe
