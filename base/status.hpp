// Status: the outcome of an operation that can fail on bad input, I/O or stored bytes.
//
// base/ is the bottom library: every layer (scheduling/, paramserver/, workload/, gpu/, actors/,
// apps/) may include it, and it includes nothing of the project. A Status is either OK or an error
// carrying one human-readable line that names where the problem is
// ("configs/x.textproto:12:3: unknown field 'foo'"). Callers print it and exit with status 2 (bad
// input) or 1 (anything else); nothing that could look like a result is written. kCorrupt means
// stored bytes failed a check (checksum, magic, size) and nothing read from them was returned.
// Errors travel as values: no exception crosses a library boundary. Status is [[nodiscard]]: a
// call whose Status is dropped does not compile. Propagate it (base/status_macros.hpp), handle it,
// or, where ignoring it is right, cast it to void beside a comment that says why.
#pragma once

#include <string>
#include <utility>

namespace troupe {

class [[nodiscard]] Status {
 public:
  enum class Code { kOk = 0, kInvalidInput = 2, kIoError = 3, kInternal = 4, kCorrupt = 5 };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidInput(std::string message) {
    return Status(Code::kInvalidInput, std::move(message));
  }
  static Status IoError(std::string message) { return Status(Code::kIoError, std::move(message)); }
  static Status Internal(std::string message) {
    return Status(Code::kInternal, std::move(message));
  }
  static Status Corrupt(std::string message) { return Status(Code::kCorrupt, std::move(message)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The process exit status this error deserves: 2 for bad input, 1 otherwise.
  int exit_code() const { return ok() ? 0 : (code_ == Code::kInvalidInput ? 2 : 1); }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace troupe
