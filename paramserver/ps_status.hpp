// PsStatus: the outcome of a parameter-server operation that can fail on bad input or I/O.
//
// The parameter server is plain C++ and does not depend on emulation/, so it carries this small
// Status of its own. An error holds one human-readable line naming where the problem is
// ("/data/ssd/00000000000000000042.ssd: body checksum mismatch"); kCorrupt means stored bytes
// failed a check (checksum, magic, size) and nothing read from them was returned as parameters.
#pragma once

#include <string>
#include <utility>

namespace troupe::paramserver {

class PsStatus {
 public:
  enum class Code { kOk = 0, kInvalidArgument, kIoError, kCorrupt };

  PsStatus() = default;
  static PsStatus Ok() { return PsStatus(); }
  static PsStatus InvalidArgument(std::string message) {
    return PsStatus(Code::kInvalidArgument, std::move(message));
  }
  static PsStatus IoError(std::string message) {
    return PsStatus(Code::kIoError, std::move(message));
  }
  static PsStatus Corrupt(std::string message) {
    return PsStatus(Code::kCorrupt, std::move(message));
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  PsStatus(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace troupe::paramserver
