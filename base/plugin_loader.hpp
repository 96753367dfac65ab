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
#include <type_traits>

#include "base/status.hpp"
#include "base/status_macros.hpp"

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

// The file the plugin is looked for at now, by the rules above.
std::string PluginPath(const PluginSpec& spec);

// dlopen(path) (RTLD_NOW: a library it needs and cannot find fails here, with its name), the entry
// point, and the two checks. `*table` points at the table's header. No caching. Errors are
// Internal, one line: the spec's name, then dlopen()'s words or the mismatch.
Status LoadPluginFrom(const PluginSpec& spec, const std::string& path, const PluginHeader** table);

// LoadPluginFrom for a table whose first member is its PluginHeader.
template <class Table>
Status LoadPluginTableFrom(const PluginSpec& spec, const std::string& path, const Table** table) {
  static_assert(std::is_standard_layout_v<Table>, "a plugin table starts with its PluginHeader");
  const PluginHeader* header = nullptr;
  RETURN_IF_ERROR(LoadPluginFrom(spec, path, &header));
  *table = reinterpret_cast<const Table*>(header);  // its first member: the same address
  return Status::Ok();
}

// The table at PluginPath(spec), loaded by the first call for this Table; later calls get that
// call's outcome, failure included, for the life of the process.
template <class Table>
Status LoadPluginTableOnce(const PluginSpec& spec, const Table** table) {
  struct Loaded {
    Status status;
    const Table* table = nullptr;
  };
  static const Loaded once = [&spec] {
    Loaded l;
    l.status = LoadPluginTableFrom(spec, PluginPath(spec), &l.table);
    return l;
  }();
  if (once.status.ok()) *table = once.table;
  return once.status;
}

}  // namespace troupe
