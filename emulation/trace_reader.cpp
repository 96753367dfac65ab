#include "emulation/trace_reader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <unordered_map>
#include <utility>

#include "emulation/csv_input.hpp"
#include "emulation/model_assigner.hpp"

namespace troupe {
namespace {

// Every column has a range, so that no job can outlast the run's clock (int64 nanoseconds, about
// 9.2e9 s) or need more GPUs than a cluster can have (config_validation.cpp's limits).
constexpr double kMaxTraceSeconds = 1e9;
constexpr int64_t kMaxJobId = 1'000'000'000'000;
constexpr int64_t kMaxJobGpus = 100000;

// iterations = floor(duration / iter_time), at least 1: a job always has work to do.
int64_t IterationsFor(double duration_s, const ModelProfile& model) {
  double iterations = std::floor(duration_s / model.iter_time_s);
  if (iterations >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return std::numeric_limits<int64_t>::max();
  }
  return std::max<int64_t>(1, static_cast<int64_t>(iterations));
}

Status ParseGpus(std::string_view field, std::string_view file, int64_t line,
                 std::string_view column, int32_t* gpus) {
  int64_t value = 0;
  Status status = ParseInt64Field(field, file, line, column, &value);
  if (status.ok()) {
    status = CheckFieldRange(static_cast<double>(value), 1, kMaxJobGpus, field, file, line, column);
  }
  *gpus = static_cast<int32_t>(value);
  return status;
}

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
  Status status = header.Require("job_id", file, &col->job_id);
  if (status.ok()) status = header.Require("model", file, &col->model);
  if (status.ok()) status = header.Require("arrival_s", file, &col->arrival);
  if (status.ok()) status = header.Require("gpus", file, &col->gpus);
  if (!status.ok()) return status;
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
    status = CheckFieldRange(static_cast<double>(job->job_id), 0, kMaxJobId,
                             line.fields[col.job_id], file, line.number, "job_id");
  }
  std::string_view model_name = line.fields[col.model];
  const ModelProfile* model = catalog.Find(model_name);
  if (status.ok() && model == nullptr) {
    return FieldError(file, line.number, "model",
                      "unknown model '" + std::string(model_name) + "'");
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
  if (status.ok()) status = ParseGpus(line.fields[col.gpus], file, line.number, "gpus", &job->gpus);
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

// ---- Philly format ----

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil), so
// timestamps convert without the locale or the C library's time zone handling.
int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// Parses "YYYY-MM-DD HH:MM:SS" (UTC) into seconds since the Unix epoch.
bool ParseTimestamp(std::string_view text, int64_t* seconds) {
  static constexpr std::string_view kShape = "dddd-dd-dd dd:dd:dd";
  if (text.size() != kShape.size()) return false;
  for (size_t i = 0; i < kShape.size(); ++i) {
    bool digit = text[i] >= '0' && text[i] <= '9';
    if (kShape[i] == 'd' ? !digit : text[i] != kShape[i]) return false;
  }
  auto number = [&](size_t at, size_t length) {
    int value = 0;
    for (size_t i = at; i < at + length; ++i) value = value * 10 + (text[i] - '0');
    return value;
  };
  int year = number(0, 4), month = number(5, 2), day = number(8, 2);
  int hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 ||
      minute > 59 || second > 59) {
    return false;
  }
  *seconds = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return true;
}

struct PhillyRow {
  int64_t time_s = 0;
  double duration_s = 0;
  int32_t gpus = 1;
  int64_t line = 0;
};

Status ParsePhillyRow(const CsvLine& line, const int* col, std::string_view file, PhillyRow* row) {
  row->line = line.number;
  if (!ParseTimestamp(line.fields[col[0]], &row->time_s)) {
    return FieldError(
        file, line.number, "timestamp",
        "not a 'YYYY-MM-DD HH:MM:SS' time: '" + std::string(line.fields[col[0]]) + "'");
  }
  Status status =
      ParseDoubleField(line.fields[col[1]], file, line.number, "duration", &row->duration_s);
  if (status.ok()) {
    status = CheckFieldRange(row->duration_s, 0, kMaxTraceSeconds, line.fields[col[1]], file,
                             line.number, "duration");
  }
  if (status.ok())
    status = ParseGpus(line.fields[col[2]], file, line.number, "num_gpus", &row->gpus);
  return status;
}

Status ParsePhilly(CsvCursor* cursor, const CsvHeader& header, std::string_view file,
                   const TraceOptions& options, const ModelCatalog& catalog,
                   std::vector<JobSpec>* jobs) {
  Status status =
      ModelAssigner::ValidateMix(catalog, options.image_percent, options.language_percent,
                                 options.speech_percent, std::string(file) + ": trace options");
  int col[3];
  const char* kColumns[] = {"timestamp", "duration", "num_gpus"};
  for (int i = 0; status.ok() && i < 3; ++i) status = header.Require(kColumns[i], file, &col[i]);
  std::vector<PhillyRow> rows;
  CsvLine line;
  while (status.ok() && cursor->Next(&line)) {
    status = header.CheckWidth(line, file);
    PhillyRow row;
    if (status.ok()) status = ParsePhillyRow(line, col, file, &row);
    if (status.ok()) rows.push_back(row);
  }
  if (!status.ok()) return status;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const PhillyRow& a, const PhillyRow& b) { return a.time_s < b.time_s; });
  if (options.max_jobs > 0 && static_cast<size_t>(options.max_jobs) < rows.size()) {
    rows.resize(options.max_jobs);
  }
  if (!rows.empty() && rows.back().time_s - rows.front().time_s > kMaxTraceSeconds) {
    return FieldError(
        file, rows.back().line, "timestamp",
        "more than " + FormatNumber(kMaxTraceSeconds) + " s after the trace's first job");
  }
  ModelAssigner assigner(catalog, options.image_percent, options.language_percent,
                         options.speech_percent);
  jobs->reserve(rows.size());
  for (const PhillyRow& row : rows) {
    const ModelProfile& model = assigner.Next();
    JobSpec job;
    job.job_id = static_cast<int64_t>(jobs->size());
    job.model = model.name;
    job.gpus = row.gpus;
    job.iterations = IterationsFor(row.duration_s, model);
    job.arrival_s = static_cast<double>(row.time_s - rows.front().time_s);
    job.source_line = row.line;
    jobs->push_back(std::move(job));
  }
  return Status::Ok();
}

Status DetectFormat(const CsvHeader& header, std::string_view file, TraceFormat* format) {
  if (header.Find("timestamp") >= 0 && header.Find("num_gpus") >= 0) {
    *format = TraceFormat::kPhilly;
  } else if (header.Find("job_id") >= 0) {
    *format = TraceFormat::kTroupe;
  } else {
    return Status::InvalidInput(
        std::string(file) + ":" + std::to_string(header.line_number()) +
        ": cannot tell the trace format from the header '" + header.Joined() +
        "' (expected troupe's job_id,model,arrival_s,iterations,gpus or Philly's "
        "timestamp,duration,num_gpus,gpu_time,cluster)");
  }
  return Status::Ok();
}

}  // namespace

Status ParseTrace(std::string_view text, std::string_view name, const TraceOptions& options,
                  const ModelCatalog& catalog, std::vector<JobSpec>* jobs) {
  jobs->clear();
  if (options.max_jobs < 0) {
    return Status::InvalidInput(std::string(name) + ": max_jobs must not be negative, got " +
                                std::to_string(options.max_jobs));
  }
  CsvCursor cursor(text);
  CsvLine first;
  if (!cursor.Next(&first)) return Status::InvalidInput(std::string(name) + ": empty trace");
  CsvHeader header;
  Status status = header.Parse(first, name);
  TraceFormat format = options.format;
  if (status.ok() && format == TraceFormat::kAutoDetect) {
    status = DetectFormat(header, name, &format);
  }
  if (status.ok()) {
    status = format == TraceFormat::kPhilly
                 ? ParsePhilly(&cursor, header, name, options, catalog, jobs)
                 : ParseTroupe(&cursor, header, name, catalog, jobs);
  }
  if (!status.ok()) {
    jobs->clear();
    return status;
  }
  SortAndTruncate(options.max_jobs, jobs);
  return Status::Ok();
}

Status ReadTrace(const std::string& path, const TraceOptions& options, const ModelCatalog& catalog,
                 std::vector<JobSpec>* jobs) {
  jobs->clear();
  std::string text;
  Status status = ReadWholeFile(path, &text);
  if (!status.ok()) return status;
  return ParseTrace(text, path, options, catalog, jobs);
}

Status OpenTraceSource(const std::string& path, const TraceOptions& options,
                       const ModelCatalog& catalog, std::unique_ptr<JobSource>* source) {
  std::vector<JobSpec> jobs;
  Status status = ReadTrace(path, options, catalog, &jobs);
  if (!status.ok()) return status;
  std::string name = std::filesystem::path(path).filename().string();
  *source = std::make_unique<VectorJobSource>(std::move(jobs), "trace " + name);
  return Status::Ok();
}

}  // namespace troupe
