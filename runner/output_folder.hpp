// Which folders troupe may replace. Nothing a user owns is ever overwritten or deleted: troupe
// replaces or removes a folder only when it wrote that folder itself.
//
// Every folder troupe writes (a run directory, a sweep folder, a report folder, a staging folder)
// holds a marker file, `.troupe-output`, whose first line is "troupe output: KIND" and whose
// other lines name the entries troupe put there, one per line. A folder is troupe's when it has
// that marker and every entry in it is either named by the marker or is itself troupe's (a sweep
// holds run directories; a run directory may hold its report). A file a user added, a folder
// without the marker or a symbolic link makes the folder the user's.
//
// A folder troupe is still writing stays troupe's at every moment: each file is named in the
// marker before it is created (NameInOutputMarker), and a marker is rewritten by renaming a new
// one over it, so a process killed at any point leaves a folder the next run can tell for troupe's.
#pragma once

#include <string>
#include <vector>

#include "base/status.hpp"

namespace troupe {

inline constexpr char kOutputMarker[] = ".troupe-output";
// The kind of a parameter-server node's SSD-PS scratch folder: troupe's when it holds, beside its
// marker, nothing but the files the store writes (paramserver::SsdStore::IsStoreFileName).
inline constexpr char kSsdPsKind[] = "ssd-ps";
// The kind of the folder holding a run's node folders when they are scratch in its staging folder.
inline constexpr char kSsdRootKind[] = "ssd-root";

// Ok when troupe may write its output folder at `path`: the path names a folder (not "", "." or
// ".."), fits the system's limits (PATH_MAX, NAME_MAX for each part), is not the current
// directory nor one of its ancestors, is not inside a kernel file system (/proc, /sys), and
// either does not exist yet and can be created (its nearest existing ancestor is a writable
// folder) or is an empty folder or a troupe folder.
// Otherwise InvalidInput "WHAT PATH: why", where `what` names the flag or field ("--out",
// "configs/x.textproto: run.out_dir").
Status CheckOutputFolder(const std::string& path, const std::string& what);

// True when `path` is a folder troupe wrote (see above).
bool IsTroupeFolder(const std::string& path);

// The marker's text for a folder of `kind` ("run", "sweep", "report", "staging") holding
// `entries`.
std::string OutputMarkerText(const std::string& kind, const std::vector<std::string>& entries);

// Writes the marker into `folder`, naming every entry it holds now. An existing marker is replaced
// whole (a new one renamed over it), never left half-written.
Status WriteOutputMarker(const std::string& folder, const std::string& kind);

// Adds `name` to the marker of `folder` (which has one): called before troupe creates `name`
// there, so that the folder is troupe's even if the process dies while writing it.
Status NameInOutputMarker(const std::string& folder, const std::string& name);

// The folder `path` names: "runs/x/" and "runs/x/." are runs/x.
std::string OutputTarget(const std::string& path);

// Makes `path` an empty folder marked as troupe's scratch of `kind` (a parameter server's SSD-PS
// store): created if missing, emptied if it is an earlier scratch folder of that kind or empty.
// A folder troupe did not mark is never emptied: InvalidInput "WHAT PATH: why".
Status ResetScratchFolder(const std::string& path, const std::string& kind,
                          const std::string& what);

// Cleans up after troupe processes no longer alive that wrote `path` (a folder of `kind`: "run",
// "report") and were killed mid-way. A `PATH.tmp-PID` staging folder is removed when it is a troupe
// folder (everything in it named by its marker), or holds nothing but a marker cut short (the
// process died writing it). A `PATH.old-PID` set-aside folder is moved back onto `path` if that
// has gone, else removed, but only when it is a complete troupe folder of `kind` (its marker says
// `kind`, names every entry it holds, and every entry it names is there). Anything else is left.
void RemoveStaleStaging(const std::string& path, const std::string& kind);

}  // namespace troupe
