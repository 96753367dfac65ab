#include "workload/philly_job_log.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "base/quoted.hpp"
#include "workload/model_assigner.hpp"
#include "workload/public_traces.hpp"
#include "workload/trace_fields.hpp"

namespace troupe {
namespace {

using Json = nlohmann::json;

// An attempt's times, each missing when the log has none (empty, null or "None").
struct AttemptTimes {
  bool started = false, ended = false;
  int64_t start_s = 0, end_s = 0;
  bool whole() const { return started && ended; }
  double run_s() const { return static_cast<double>(end_s - start_s); }
};

// Reads the jobs of the log one at a time into rows, and the first error.
class JobReader {
 public:
  JobReader(std::string_view file, const TraceOptions& options) : file_(file), options_(options) {}

  // The next job of the list (a parsed JSON value); after an error, nothing.
  void Next(const Json& job) {
    ++index_;
    if (status_.ok()) status_ = Read(job);
  }
  const Status& status() const { return status_; }
  std::vector<TimedRow>& rows() { return rows_; }
  std::vector<std::vector<double>>& attempts() { return attempts_; }

 private:
  Status Error(const std::string& what) const { return Status::InvalidInput(where_ + ": " + what); }
  Status Read(const Json& job);
  Status ReadTime(const Json& object, const char* key, const std::string& context, int64_t* seconds,
                  bool* present) const;
  Status ReadAttempt(const Json& attempt, size_t i, AttemptTimes* times) const;
  Status CountGpus(const Json& attempt, int32_t* gpus) const;
  Status ReadStatus(const Json& job, TraceEnd* end) const;

  std::string_view file_;
  const TraceOptions& options_;
  int64_t index_ = 0;  // of the job being read, from 1
  std::string where_;  // "file: job N (jobid 'x')"
  Status status_ = Status::Ok();
  std::vector<TimedRow> rows_;
  std::vector<std::vector<double>> attempts_;
};

Status JobReader::ReadTime(const Json& object, const char* key, const std::string& context,
                           int64_t* seconds, bool* present) const {
  *present = false;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::Ok();
  if (!it->is_string()) return Error(context + "'" + key + "' is not a string");
  const std::string& text = it->get_ref<const std::string&>();
  if (text.empty() || text == "None") return Status::Ok();
  if (!ParseDateTime(text, ZoneOffset::kNone, seconds)) {
    return Error(context + "'" + key + "' is not a 'YYYY-MM-DD HH:MM:SS' time: " + Quoted(text));
  }
  *present = true;
  return Status::Ok();
}

Status JobReader::ReadAttempt(const Json& attempt, size_t i, AttemptTimes* times) const {
  const std::string context = "attempt " + std::to_string(i + 1) + ": ";
  if (!attempt.is_object()) return Error(context + "not an object");
  Status status = ReadTime(attempt, "start_time", context, &times->start_s, &times->started);
  if (status.ok()) status = ReadTime(attempt, "end_time", context, &times->end_s, &times->ended);
  if (status.ok() && times->whole() &&
      (times->end_s < times->start_s || times->run_s() > kMaxTraceSeconds)) {
    return Error(context + "'end_time' must be in [start_time, start_time + 1e9 s]");
  }
  return status;
}

// The GPUs of an attempt: every GPU its detail lists, on every server.
Status JobReader::CountGpus(const Json& attempt, int32_t* gpus) const {
  auto detail = attempt.find("detail");
  if (detail == attempt.end() || !detail->is_array()) {
    return Error("attempt 1: 'detail' is missing or not a list");
  }
  int64_t count = 0;
  for (const Json& server : *detail) {
    auto list = server.is_object() ? server.find("gpus") : server.end();
    if (!server.is_object() || list == server.end() || !list->is_array()) {
      return Error("attempt 1: 'detail': a server without a list 'gpus'");
    }
    count += static_cast<int64_t>(list->size());
  }
  if (count > kMaxTraceJobGpus) {
    return Error("attempt 1: more than " + std::to_string(kMaxTraceJobGpus) + " GPUs");
  }
  *gpus = static_cast<int32_t>(count);
  return Status::Ok();
}

Status JobReader::ReadStatus(const Json& job, TraceEnd* end) const {
  auto status = job.find("status");
  if (status == job.end() || !status->is_string()) {
    return Error("'status' is missing or not a string");
  }
  const std::string& text = status->get_ref<const std::string&>();
  if (text != "Pass" && text != "Killed" && text != "Failed") {
    return Error("'status' must be Pass, Killed or Failed, got " + Quoted(text));
  }
  *end = options_.replay_job_failures ? TraceEndOf(text) : TraceEnd::kNone;
  return Status::Ok();
}

Status JobReader::Read(const Json& job) {
  where_ = std::string(file_) + ": job " + std::to_string(index_);
  if (!job.is_object()) return Error("not an object");
  if (auto id = job.find("jobid"); id != job.end() && id->is_string()) {
    where_ += " (jobid " + Quoted(id->get_ref<const std::string&>()) + ")";
  }
  TimedRow row;
  row.line = index_;
  int64_t submitted = 0;
  bool has_submitted = false;
  RETURN_IF_ERROR(ReadTime(job, "submitted_time", "", &submitted, &has_submitted));
  if (!has_submitted) return Error("'submitted_time' is missing");
  row.time_s = static_cast<double>(submitted);
  RETURN_IF_ERROR(ReadStatus(job, &row.end));
  auto list = job.find("attempts");
  if (list == job.end() || !list->is_array()) return Error("'attempts' is missing or not a list");
  std::vector<AttemptTimes> times(list->size());
  for (size_t i = 0; i < times.size(); ++i) RETURN_IF_ERROR(ReadAttempt((*list)[i], i, &times[i]));
  if (times.empty() || !times.front().started || !times.back().whole()) return Status::Ok();
  RETURN_IF_ERROR(CountGpus(list->front(), &row.gpus));
  if (row.gpus == 0) return Status::Ok();  // no GPU work
  row.duration_s = times.back().run_s();
  if (options_.replay_job_failures && times.size() > 1) {
    std::vector<double> crashed;
    for (size_t i = 0; i + 1 < times.size(); ++i) {
      if (times[i].whole()) crashed.push_back(times[i].run_s());
    }
    row.attempts = static_cast<int32_t>(attempts_.size());
    attempts_.push_back(std::move(crashed));
  }
  rows_.push_back(row);
  return Status::Ok();
}

// nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: ..." without its
// bracketed name.
std::string ParseErrorText(const char* what) {
  std::string text(what);
  if (const size_t end = text.find("] ");
      text.rfind("[json.", 0) == 0 && end != std::string::npos) {
    text.erase(0, end + 2);
  }
  return Excerpt(text, 2 * kMaxQuotedBytes);  // "last read: '...'" may quote a long token
}

}  // namespace

Status ParsePhillyJobLog(std::FILE* file, std::string_view text, std::string_view name,
                         const TraceOptions& options, const ModelCatalog& catalog,
                         std::vector<JobSpec>* jobs) {
  RETURN_IF_ERROR(ModelAssigner::ValidateMix(catalog, options.image_percent,
                                             options.language_percent, options.speech_percent,
                                             std::string(name) + ": trace options"));
  JobReader reader(name, options);
  int top = -1;  // 0: the file is one job (an object), 1: a list of jobs
  // Each job is read when its object closes, then dropped: one job is held at a time.
  auto on_event = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (depth == 0 &&
        (event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start)) {
      top = event == Json::parse_event_t::array_start ? 1 : 0;
    }
    const bool closes = event == Json::parse_event_t::object_end ||
                        event == Json::parse_event_t::array_end ||
                        event == Json::parse_event_t::value;
    if (closes && depth == top) {
      reader.Next(parsed);
      return false;
    }
    return true;
  };
  try {
    Json ignored = file != nullptr ? Json::parse(file, on_event) : Json::parse(text, on_event);
  } catch (const Json::exception& e) {
    return Status::InvalidInput(std::string(name) + ": " + ParseErrorText(e.what()));
  }
  if (top < 0) return Status::InvalidInput(std::string(name) + ": not a list of jobs");
  RETURN_IF_ERROR(reader.status());
  return BuildTraceJobs(std::move(reader.rows()), std::move(reader.attempts()), name,
                        "submitted_time", options, catalog, jobs);
}

}  // namespace troupe
