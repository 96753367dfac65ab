// Config loader: turns a protobuf text-format RunConfig into a config::RunConfig (checked by
// config/config_validation.hpp).
//
// Contract:
//  - LoadConfigFile / ParseConfigText parse only what the schema (config/config.proto) says.
//    An unknown field, a value of the wrong type or an unknown enum name gives InvalidInput
//    "path:line:column: <protobuf's message>" with a 1-based line and column. A file that cannot
//    be read gives InvalidInput "path: cannot read: <strerror>". LoadConfigFile then takes the
//    config's relative input paths (a trace, a secret file...) from the file's folder
//    (config/config_paths.hpp); ApplyOverride, applied later, leaves them as given.
//  - ApplyOverride applies one command-line `--set field.path=value` to a parsed config: scalar,
//    string, bool and enum fields (enums by value name), reached through sub-messages. An entry
//    of a repeated field is named by its index, from 0: `cluster.servers[1].count=8`,
//    `paramserver.hidden[0]=128`; the entry must exist. Anything else (unknown path, a value that
//    does not parse, a message, a repeated field without an index, an index out of range) gives
//    InvalidInput "--set <assignment>: <why>". Misspelt names (a field, an enum value) get a
//    "(did you mean 'x'?)" when a known one is close (base/closest_name.hpp).
//  - LocateConfigError adds the file's line (or names the --set) to a later check's error.
// All errors are a single line. Nothing here touches the file system except LoadConfigFile's read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "config/config.pb.h"

namespace troupe {

Status LoadConfigFile(const std::string& path, config::RunConfig* out);

// `name` stands for the text's origin (usually its path) in error messages.
Status ParseConfigText(std::string_view text, const std::string& name, config::RunConfig* out);

Status ApplyOverride(std::string_view assignment, config::RunConfig* cfg);

// Says where a checked config's bad value came from. `status` is ValidateConfig's (or
// CheckFieldRanges') error "PATH: field.path: why" about the config loaded from the file PATH and
// then changed by the assignments `sets` (`--set`, `--over`) in order: the last assignment to that
// field gives "--set <assignment>: field.path: why"; else the field's line in the file gives
// "PATH:LINE: field.path: why". Other errors (a default value, a message about no one field)
// come back as they are. Reads the file again, only on error.
Status LocateConfigError(Status status, const std::string& path,
                         const std::vector<std::string>& sets);

// The 1-based line of the file text that sets `field_path` ("cluster.servers[1].count"), or 0
// when the text does not set it (or does not parse).
int FieldLine(std::string_view text, std::string_view field_path);

}  // namespace troupe
