// Reading the small comma-separated files troupe takes as input (model catalogue, traces).
//
// Contract: CsvCursor walks a text held in memory, or streams an open file, line by line, skipping
// blank lines and lines whose first non-blank character is '#', and splits each remaining line on
// ',' (no quoting: no field of troupe's inputs holds a comma). Fields come back trimmed of spaces,
// tabs and '\r', as views: into the text, which must outlive them, or, for a file, into the
// cursor's buffer, valid until the next call to Next (a file of millions of lines is never held
// whole; a line longer than kMaxInputLineBytes stops it, base/input_file.hpp). Line numbers are
// 1-based physical lines, so an error can point at the line a user sees in an editor. CsvHeader
// maps column names to field indices. The Parse* helpers accept exactly a whole number (no trailing
// junk, no inf or nan) and report a one-line InvalidInput "file:line: column 'name': not a number:
// 'abc'".
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/input_file.hpp"
#include "base/status.hpp"

namespace troupe {

// Removes leading and trailing spaces, tabs and carriage returns.
std::string_view TrimField(std::string_view field);

struct CsvLine {
  int64_t number = 0;                    // 1-based line number in the text
  std::vector<std::string_view> fields;  // trimmed fields, views into the text
};

class CsvCursor {
 public:
  // A leading UTF-8 byte-order mark (spreadsheets write one) is skipped.
  explicit CsvCursor(std::string_view text);
  // Streams `file` (not owned, read from its current position); `path` names it in errors.
  CsvCursor(std::FILE* file, std::string path);
  // Fills *line with the next line that holds data; false once the text is exhausted or a read
  // failed (then status() says why). Reusing one CsvLine across calls keeps the field vector's
  // allocation.
  bool Next(CsvLine* line);
  // InvalidInput "path: cannot read: <why>" once reading the file failed, or "path:line: line
  // longer than ..."; Ok otherwise.
  const Status& status() const { return file_ ? file_->status() : kOk; }

 private:
  // The next physical line, without its '\n'; false at the end.
  bool NextRawLine(std::string_view* raw);

  static inline const Status kOk = Status::Ok();
  std::string_view text_;
  size_t pos_ = 0;
  int64_t line_number_ = 0;
  std::unique_ptr<LineReader> file_;  // streaming
};

class CsvHeader {
 public:
  // Reads the column names of `line`; a repeated name is an error naming `file`, the line and
  // both columns (1-based).
  Status Parse(const CsvLine& line, std::string_view file);
  // Index of the column called `name`, or -1 when the header has no such column.
  int Find(std::string_view name) const;
  // As Find, but a missing column is an InvalidInput error naming the file and header line.
  Status Require(std::string_view name, std::string_view file, int* index) const;
  size_t size() const { return names_.size(); }
  int64_t line_number() const { return line_number_; }
  // The header's column names, comma-separated, for error messages.
  std::string Joined() const;
  // A data line must have exactly as many fields as the header: "expected 5 columns, found 4".
  Status CheckWidth(const CsvLine& line, std::string_view file) const;

 private:
  // Looks a name up by a string_view without making a string of it.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };

  std::vector<std::string> names_;
  // Each name's index: Parse checks a header of n columns for repeats in n look-ups, not n^2/2
  // comparisons (a header 20,000 columns wide took minutes).
  std::unordered_map<std::string, int, NameHash, std::equal_to<>> index_;
  int64_t line_number_ = 0;
};

// "file:line: column 'name': message" as an InvalidInput Status.
Status FieldError(std::string_view file, int64_t line, std::string_view column,
                  std::string_view message);

Status ParseDoubleField(std::string_view text, std::string_view file, int64_t line,
                        std::string_view column, double* out);
Status ParseInt64Field(std::string_view text, std::string_view file, int64_t line,
                       std::string_view column, int64_t* out);

// "file:line: column 'name': must be in [min, max], got <text>" unless min <= value <= max.
Status CheckFieldRange(double value, double min, double max, std::string_view text,
                       std::string_view file, int64_t line, std::string_view column);

// Shortest decimal text that reads back as `value` ("62.5", "20.83", "3"), for messages.
std::string FormatNumber(double value);

}  // namespace troupe
