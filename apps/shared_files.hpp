// Where the files troupe ships beside its binary (configs/, scripts/plot.py and its package) are
// found, whether troupe runs from its build folder or was installed (`make install`: the binary in
// PREFIX/bin, the rest in PREFIX/share/troupe).
#pragma once

#include <string>

namespace troupe {

// The first of: `relative` under the installed share folder (<binary>/../share/troupe), under the
// source tree troupe was built from. "" when neither exists. Never the current folder: a script
// found there would be whatever the user's folder holds.
std::string FindShippedFile(const std::string& relative);

// The same places, for messages: "/usr/local/share/troupe, /src/troupe".
std::string ShippedFilePlaces();

// The config `troupe run` takes without one: configs/default.textproto under the current folder
// if it has one (a checkout), else the shipped one; the relative path when neither exists.
std::string DefaultConfigPath();

}  // namespace troupe
