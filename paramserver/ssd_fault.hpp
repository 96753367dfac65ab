// SsdWriteFault: a switch that makes SSD-PS's writes fail, for fault injection
// (docs/paramserver.md, "Faults"). No real disk is filled: the file layer (ssd_file.hpp,
// ssd_manifest.hpp) asks the switch before each file it writes and, while it is set, writes only
// the first half of the file and fails as write(2) would with the switch's errno (EIO: a failing
// device; ENOSPC: a full disk). So a failing write leaves what a real one leaves — a truncated
// parameter file or MANIFEST.tmp — and the store's recovery rules (orphans deleted, the old
// MANIFEST kept) are what keeps it consistent.
//
// `healthy_writes` lets that many further file writes succeed before the error takes effect (a
// test's way to fail the manifest after the parameter files). Plain data, one owner; not
// thread-safe (the owner of the store sets it between the store's calls).
#pragma once

#include <cstdint>

namespace troupe::paramserver {

class SsdWriteFault {
 public:
  // Fails every write from now (after `healthy_writes` more) with `error` (an errno value).
  void Fail(int error, int64_t healthy_writes = 0) {
    error_ = error;
    healthy_writes_ = healthy_writes;
  }
  void Clear() { error_ = 0; }
  bool active() const { return error_ != 0; }

  // Called by the file layer once per file it is about to write: the errno to fail it with, or 0.
  int NextWrite() {
    if (error_ == 0) return 0;
    if (healthy_writes_ > 0) {
      --healthy_writes_;
      return 0;
    }
    ++failed_writes_;
    return error_;
  }
  int64_t failed_writes() const { return failed_writes_; }

 private:
  int error_ = 0;
  int64_t healthy_writes_ = 0;
  int64_t failed_writes_ = 0;
};

}  // namespace troupe::paramserver
