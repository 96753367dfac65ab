// Straggler traces (docs/failures.md, "Stragglers"): slow episodes that happened, a CSV of
// time_s, component, server, duration_s, factor, replayed the way drawn episodes are
// (faults/straggler_model.hpp). In a `link` row, `server` holds the rack whose uplink slows.
//
// Contract: the first line that holds data is the header and names exactly those five columns, in
// any order; blank lines and lines starting with '#' are skipped; a trace of the header alone has
// no episodes. Each row is one episode: `server` runs at `factor` of its speed from time_s for
// duration_s. Bad input — a missing or extra column, a non-number, a time outside [0, 1e9], a
// duration outside (0, 1e9], a factor outside [0.001, 1], an unknown component, a server the run
// does not have, a `link` row naming a rack the fabric does not have (or any, without a fabric) —
// is one InvalidInput line naming the file, the line
// and the column ("stragglers.csv:4: column 'server': ..."), and nothing is appended. Pure: no CAF.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "faults/fault_plan.hpp"
#include "faults/straggler_model.hpp"

namespace troupe {

// Parses a straggler trace held in `text`; `name` stands for the file in messages. Appends its
// episodes to `out`.
Status ParseStragglerTrace(std::string_view text, std::string_view name,
                           const FaultUniverse& universe, std::vector<StragglerEpisode>* out);

// Reads the straggler trace at `path` (a regular file) and appends its episodes to `out`.
Status ReadStragglerTrace(const std::string& path, const FaultUniverse& universe,
                          std::vector<StragglerEpisode>* out);

}  // namespace troupe
