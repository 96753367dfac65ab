// What a run was. Every run directory, of every kind, holds config.textproto: the fully resolved
// config the run was planned from (the file with every --set, --seed, --out and --fault applied,
// and, in a sweep or a chaos campaign, the point's values and the drawn faults), in protobuf text
// format, under a header naming troupe's version and the command that ran it. Its input files
// (config/config_paths.hpp) are named by absolute path, so `troupe run RUN_DIR/config.textproto`
// runs it again, with the same results, from any folder.
#pragma once

#include <string>

#include "base/status.hpp"
#include "config/config.pb.h"

namespace troupe {

inline constexpr char kRunRecordFile[] = "config.textproto";

// Who ran a run: put in the record's header.
struct RunProvenance {
  std::string version;       // troupe's, e.g. "0.9.0"; "" unknown
  std::string command_line;  // as typed, e.g. "troupe run --set scheduler.policy=srtf"; "" none
};

// config.textproto's text: the header (comment lines) and `cfg` in text format. It parses back
// to `cfg` exactly, but for relative input paths, which are made absolute from the current folder.
std::string RunRecordText(const config::RunConfig& cfg, const RunProvenance& provenance);

// Writes config.textproto into out_dir's staging folder (runner/run_directory.hpp), which the
// run's commit then moves into place with the rest of the run directory.
Status StageRunRecord(const std::string& out_dir, const config::RunConfig& cfg,
                      const RunProvenance& provenance);

}  // namespace troupe
