#include "workload/trace_fields.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "workload/csv_input.hpp"

namespace troupe {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
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

// True when `text` has the shape of `shape`, where 'd' stands for a digit.
bool HasShape(std::string_view text, std::string_view shape) {
  if (text.size() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool digit = text[i] >= '0' && text[i] <= '9';
    if (shape[i] == 'd' ? !digit : text[i] != shape[i]) return false;
  }
  return true;
}

int Number(std::string_view text, size_t at, size_t length) {
  int value = 0;
  for (size_t i = at; i < at + length; ++i) value = value * 10 + (text[i] - '0');
  return value;
}

// "+HH:MM" or "-HH:MM" into signed seconds east of UTC.
bool ParseOffset(std::string_view text, int64_t* seconds) {
  if (!HasShape(text.substr(1), "dd:dd") || (text[0] != '+' && text[0] != '-')) return false;
  int hours = Number(text, 1, 2), minutes = Number(text, 4, 2);
  if (hours > 23 || minutes > 59) return false;
  *seconds = (text[0] == '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
  return true;
}

}  // namespace

int64_t IterationsFor(double duration_s, const ModelProfile& model) {
  double iterations = std::floor(duration_s / model.iter_time_s);
  if (iterations >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return std::numeric_limits<int64_t>::max();
  }
  return std::max<int64_t>(1, static_cast<int64_t>(iterations));
}

Status ParseGpusField(std::string_view field, std::string_view file, int64_t line,
                      std::string_view column, int32_t* gpus) {
  int64_t value = 0;
  Status status = ParseInt64Field(field, file, line, column, &value);
  if (status.ok()) {
    status = CheckFieldRange(static_cast<double>(value), 1, static_cast<double>(kMaxTraceJobGpus),
                             field, file, line, column);
  }
  *gpus = static_cast<int32_t>(value);
  return status;
}

Status ParseDurationField(std::string_view field, std::string_view file, int64_t line,
                          std::string_view column, double* seconds) {
  Status status = ParseDoubleField(field, file, line, column, seconds);
  if (status.ok())
    status = CheckFieldRange(*seconds, 0, kMaxTraceSeconds, field, file, line, column);
  return status;
}

bool ParseDateTime(std::string_view text, ZoneOffset offset, int64_t* seconds) {
  static constexpr std::string_view kShape = "dddd-dd-dd dd:dd:dd";
  int64_t east_of_utc = 0;
  if (offset == ZoneOffset::kOptional && text.size() == kShape.size() + 6) {
    if (!ParseOffset(text.substr(kShape.size()), &east_of_utc)) return false;
    text = text.substr(0, kShape.size());
  }
  if (!HasShape(text, kShape)) return false;
  int year = Number(text, 0, 4), month = Number(text, 5, 2), day = Number(text, 8, 2);
  int hour = Number(text, 11, 2), minute = Number(text, 14, 2), second = Number(text, 17, 2);
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 ||
      minute > 59 || second > 59) {
    return false;
  }
  *seconds =
      DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - east_of_utc;
  return true;
}

}  // namespace troupe
