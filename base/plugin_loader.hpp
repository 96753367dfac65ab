// Loading one of troupe's plugins: a shared module opened with dlopen() only when a run needs what
// it holds (the CUDA backends, the network), so that runs which do not never map its libraries.
//
// A plugin exports one C function, its entry point, returning a table of function pointers that
// begins with a PluginHeader. The table passes C++ types, so the plugin must come from the same
// build of troupe as the program: its abi_version and build_id are checked before any entry of
// the table is used. A plugin is never unloaded: what it made runs its code until the process ends.
//
// Where a plugin is looked for (PluginPath):
//   1. the file named by its environment variable, when set: that file and no other;
//   2. else its file beside the running executable (/proc/self/exe);
//   3. else, when that file does not exist, the plugin this build tree made, when the caller
//      knows one (so test and benchmark programs, which live in other folders, find it).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.hpp"

namespace troupe {

struct PluginHeader {
  uint32_t abi_version;  // first, so a table of another layout is still recognised as such
  const char* build_id;
};

struct PluginSpec {
  const char* name;        // in every error: "<name>: ..."
  const char* file;        // e.g. "troupe_network.so"
  const char* variable;    // the environment variable naming the file
  const char* entry;       // the exported C function returning the table
  uint32_t abi_version;    // what this program expects
  const char* build_id;    // this program's build
  const char* built = "";  // the build tree's copy ("" when none)
  const char* hint = "";   // appended to every error (e.g. how to build the plugin)
};

std::string PluginPath(const PluginSpec& spec);

// dlopen(path) (RTLD_NOW: a library it needs and cannot find fails here, with its name), the entry
// point, and the two checks. `*table` points at the table's header. No caching. Errors are
// Internal, one line: the spec's name, then dlopen()'s words or the mismatch.
Status LoadPluginFrom(const PluginSpec& spec, const std::string& path, const PluginHeader** table);

}  // namespace troupe
