// Failure traces (docs/faults.md, "Failure traces"): component failures that happened, a CSV of
// time_s, component, server, repair_s, replayed as the run's faults the way a failure model's draws
// are.
//
// Contract: the first line that holds data is the header and names exactly the columns time_s,
// component, server and repair_s, in any order; blank lines and lines starting with '#' are
// skipped; a trace of the header alone has no failures. Each row becomes the crashes a failure
// model's failure of its component would be: cause "failure:COMPONENT" (gpu, hbm, host, nic,
// switch), at time_s, the servers back repair_s later (0: never, lost for good). A gpu, hbm, host
// or nic row crashes its server; a switch row crashes every server of the rack that server hangs
// under (the universe's rack_of_server), or that server alone when the run has no fabric. The
// events come out sorted by time, then server, component and repair time, so the order of the rows
// never changes the plan. Bad input — a missing or extra column, a non-number, a time or repair
// time outside [0, 1e9], an unknown component, a server the run does not have — is one
// InvalidInput line naming the file, the line and the column ("trace.csv:4: column 'server':
// ..."), and nothing is appended. Pure: no CAF.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "faults/fault_plan.hpp"

namespace troupe {

// Time and repair time, in seconds, may not exceed this (about 31 years).
inline constexpr double kMaxFailureTraceSeconds = 1e9;
// More rows than this is not a trace of failures a cluster could live through.
inline constexpr size_t kMaxFailureTraceRows = 1000000;

// Parses a failure trace held in `text`; `name` stands for the file in messages. Appends the
// crashes to `out`.
Status ParseFailureTrace(std::string_view text, std::string_view name,
                         const FaultUniverse& universe, std::vector<FaultEvent>* out);

// Reads the failure trace at `path` (a regular file) and appends its crashes to `out`.
// A fault trace's `server` field on line `line` of `name`: a server of `u` (else an error saying
// the trace cannot `verb` it: "fail", "slow").
Status ParseTraceServer(std::string_view text, std::string_view name, int64_t line,
                        const FaultUniverse& u, std::string_view verb, int64_t* server);

Status ReadFailureTrace(const std::string& path, const FaultUniverse& universe,
                        std::vector<FaultEvent>* out);

}  // namespace troupe
