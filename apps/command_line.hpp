// The command line as a user could type it again, for the header of a run's config.textproto
// (runner/run_record.hpp).
#pragma once

#include <string>

#include "runner/run_record.hpp"

namespace troupe {

// `text` as one shell word: kept as it is when it holds only letters, digits and _ . / = : , @
// % + -, in $'...' with C escapes when it holds a control character (a line break), else in
// single quotes. Always one line.
std::string ShellWord(const std::string& text);

// "troupe ARG ..." (each argument a shell word) and troupe's version.
RunProvenance Provenance(const std::string& version, int argc, char** argv);

}  // namespace troupe
