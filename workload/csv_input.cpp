#include "workload/csv_input.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>

#include "base/quoted.hpp"
#include "config/config_ranges.hpp"

namespace troupe {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Splits on ',' into trimmed views; `fields` is cleared first.
void SplitFields(std::string_view text, std::vector<std::string_view>* fields) {
  fields->clear();
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) {
      fields->push_back(TrimField(text.substr(start)));
      return;
    }
    fields->push_back(TrimField(text.substr(start, comma - start)));
    start = comma + 1;
  }
}

}  // namespace

std::string_view TrimField(std::string_view field) {
  while (!field.empty() && IsBlank(field.front())) field.remove_prefix(1);
  while (!field.empty() && IsBlank(field.back())) field.remove_suffix(1);
  return field;
}

CsvCursor::CsvCursor(std::string_view text) : text_(text) {
  if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
}

CsvCursor::CsvCursor(std::FILE* file, std::string path)
    : file_(std::make_unique<LineReader>(file, std::move(path))) {}

bool CsvCursor::NextRawLine(std::string_view* raw) {
  if (file_ != nullptr) {
    if (!file_->Next(raw)) return false;
    if (line_number_ == 0 && raw->starts_with("\xEF\xBB\xBF")) raw->remove_prefix(3);
    return true;
  }
  if (pos_ >= text_.size()) return false;
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  *raw = text_.substr(pos_, end - pos_);
  pos_ = end + 1;
  return true;
}

bool CsvCursor::Next(CsvLine* line) {
  std::string_view raw;
  while (NextRawLine(&raw)) {
    ++line_number_;
    std::string_view trimmed = TrimField(raw);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    line->number = line_number_;
    SplitFields(trimmed, &line->fields);
    return true;
  }
  return false;
}

Status CsvHeader::Parse(const CsvLine& line, std::string_view file) {
  names_.clear();
  index_.clear();
  line_number_ = line.number;
  for (std::string_view name : line.fields) {
    const auto [it, added] = index_.emplace(name, static_cast<int>(names_.size()));
    if (!added) {
      return Status::InvalidInput(
          std::string(file) + ":" + std::to_string(line.number) + ": column " + Quoted(name) +
          " appears twice in the header (columns " + std::to_string(it->second + 1) + " and " +
          std::to_string(names_.size() + 1) + ")");
    }
    names_.emplace_back(name);
  }
  return Status::Ok();
}

int CsvHeader::Find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

Status CsvHeader::Require(std::string_view name, std::string_view file, int* index) const {
  *index = Find(name);
  if (*index >= 0) return Status::Ok();
  return Status::InvalidInput(std::string(file) + ":" + std::to_string(line_number_) +
                              ": header has no column " + Quoted(name) +
                              " (found: " + Excerpt(Joined()) + ")");
}

std::string CsvHeader::Joined() const {
  std::string out;
  for (const std::string& name : names_) {
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

Status CsvHeader::CheckWidth(const CsvLine& line, std::string_view file) const {
  if (line.fields.size() == names_.size()) return Status::Ok();
  return Status::InvalidInput(std::string(file) + ":" + std::to_string(line.number) +
                              ": expected " + std::to_string(names_.size()) + " columns, found " +
                              std::to_string(line.fields.size()));
}

Status FieldError(std::string_view file, int64_t line, std::string_view column,
                  std::string_view message) {
  // Bounded as a whole too: whatever value a reader put in its message stays a short line.
  return Status::InvalidInput(std::string(file) + ":" + std::to_string(line) + ": column " +
                              Quoted(column) + ": " + Excerpt(message, 4 * kMaxQuotedBytes));
}

Status CheckFieldRange(double value, double min, double max, std::string_view text,
                       std::string_view file, int64_t line, std::string_view column) {
  if (value >= min && value <= max) return Status::Ok();
  return FieldError(file, line, column,
                    "must be in [" + FormatRangeNumber(min) + ", " + FormatRangeNumber(max) +
                        "], got " + Excerpt(text));
}

Status ParseDoubleField(std::string_view text, std::string_view file, int64_t line,
                        std::string_view column, double* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(*out)) {
    return FieldError(file, line, column, "not a number: " + Quoted(text));
  }
  return Status::Ok();
}

Status ParseInt64Field(std::string_view text, std::string_view file, int64_t line,
                       std::string_view column, int64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  if (text.empty() || ec != std::errc() || ptr != end) {
    // "2.5" deserves a more precise complaint than "abc".
    double as_double;
    bool is_number = ParseDoubleField(text, file, line, column, &as_double).ok();
    return FieldError(file, line, column,
                      (is_number ? "not a whole number: " : "not a number: ") + Quoted(text));
  }
  return Status::Ok();
}

std::string FormatNumber(double value) {
  char buffer[32];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) return "?";
  return std::string(buffer, ptr);
}

}  // namespace troupe
