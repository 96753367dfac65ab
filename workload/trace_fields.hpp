// Field conversions every trace format shares: the limits on a job, iterations from a duration,
// GPU counts and calendar timestamps.
//
// Contract: every value a trace gives has a range, so that no job can outlast the run's clock
// (int64 nanoseconds, about 9.2e9 s) or need more GPUs than a cluster can have
// (config_validation's limits). Errors are one InvalidInput line "file:line: column 'x': ...".
// Timestamps are converted with plain calendar arithmetic, independent of the locale and the time
// zone of the machine.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {

inline constexpr double kMaxTraceSeconds = 1e9;
inline constexpr int64_t kMaxTraceJobId = 1'000'000'000'000;
inline constexpr int64_t kMaxTraceJobGpus = 100000;

// iterations = floor(duration / iter_time), at least 1: a job always has work to do.
int64_t IterationsFor(double duration_s, const ModelProfile& model);

// A whole number of GPUs in [1, kMaxTraceJobGpus].
Status ParseGpusField(std::string_view field, std::string_view file, int64_t line,
                      std::string_view column, int32_t* gpus);

// A duration in seconds in [0, kMaxTraceSeconds].
Status ParseDurationField(std::string_view field, std::string_view file, int64_t line,
                          std::string_view column, double* seconds);

enum class ZoneOffset { kNone, kOptional };

// Parses "YYYY-MM-DD HH:MM:SS" into seconds since the Unix epoch, the time taken as UTC. With
// kOptional the time may end in a UTC offset "+HH:MM" or "-HH:MM" (as pandas writes
// time-zone-aware times), which is subtracted. False when the text is not such a valid time.
bool ParseDateTime(std::string_view text, ZoneOffset offset, int64_t* seconds);

}  // namespace troupe
