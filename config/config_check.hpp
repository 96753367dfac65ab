// What the config validators share (config_validation.cpp, config_validation_deployment.cpp):
// Check, which keeps the first failure as one "NAME: field.path: why" line, and Num, which prints
// a number the way the failures quote it. Internal to troupe_config.
#pragma once

#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>

#include "base/status.hpp"
#include "config/config.pb.h"

namespace troupe::validation {

inline std::string Num(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

template <std::integral T>
std::string Num(T value) {
  return std::to_string(value);
}

// Runs every rule but keeps only the first failure: a Status holds one line.
class Check {
 public:
  explicit Check(const std::string& name) : name_(name) {}

  void Fail(const std::string& field, const std::string& why) {
    if (status_.ok()) status_ = Status::InvalidInput(name_ + ": " + field + ": " + why);
  }
  void AtLeast(const std::string& field, int64_t value, int64_t min) {
    if (value < min) Fail(field, "must be >= " + Num(min) + ", got " + Num(value));
  }
  // Written as !(value > 0) so that NaN fails too; infinity is no usable size or rate either.
  void Positive(const std::string& field, double value) {
    if (!std::isfinite(value) || !(value > 0)) Fail(field, "must be > 0, got " + Num(value));
  }
  const Status& status() const { return status_; }

 private:
  const std::string& name_;
  Status status_;
};

// The deployment's rules (config_validation_deployment.cpp): hosts named once with a known role
// and devices enough; placements on "host:port" nodes, each server on one; faults naming a node
// only if the run has that node.
void ValidatePlacement(const config::RunConfig& cfg, Check& check);
void ValidateNodeFaults(const config::RunConfig& cfg, Check& check);

}  // namespace troupe::validation
