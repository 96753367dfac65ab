// Which folders troupe may replace. Nothing a user owns is ever overwritten or deleted: troupe
// replaces or removes a folder only when it wrote that folder itself.
//
// Every folder troupe writes (a run directory, a sweep folder, a report folder, a staging folder)
// holds a marker file, `.troupe-output`, whose first line is "troupe output: KIND" and whose
// other lines name the entries troupe put there, one per line. A folder is troupe's when it has
// that marker and every entry in it is either named by the marker or is itself troupe's (a sweep
// holds run directories; a run directory may hold its report). A file a user added, a folder
// without the marker or a symbolic link makes the folder the user's.
#pragma once

#include <string>
#include <vector>

#include "base/status.hpp"

namespace troupe {

inline constexpr char kOutputMarker[] = ".troupe-output";

// Ok when troupe may write its output folder at `path`: the path names a folder (not "", "." or
// ".."), is not the current directory nor one of its ancestors, and either does not exist yet
// and can be created (its nearest existing ancestor is a writable folder) or is an empty folder
// or a troupe folder.
// Otherwise InvalidInput "WHAT PATH: why", where `what` names the flag or field ("--out",
// "configs/x.textproto: run.out_dir").
Status CheckOutputFolder(const std::string& path, const std::string& what);

// True when `path` is a folder troupe wrote (see above).
bool IsTroupeFolder(const std::string& path);

// The marker's text for a folder of `kind` ("run", "sweep", "report", "staging") holding
// `entries`.
std::string OutputMarkerText(const std::string& kind, const std::vector<std::string>& entries);

// Writes the marker into `folder`, naming every entry it holds now.
Status WriteOutputMarker(const std::string& folder, const std::string& kind);

// The folder `path` names: "runs/x/" and "runs/x/." are runs/x.
std::string OutputTarget(const std::string& path);

// Makes `path` an empty folder marked as troupe's scratch of `kind` (a parameter server's SSD-PS
// store): created if missing, emptied if it is an earlier scratch folder of that kind or empty.
// A folder troupe did not mark is never emptied: InvalidInput "WHAT PATH: why".
Status ResetScratchFolder(const std::string& path, const std::string& kind,
                          const std::string& what);

// Removes the `PATH.tmp-PID` staging folders and `PATH.old-PID` set-aside folders that troupe
// processes no longer alive left beside `path` (a run killed mid-way). An old folder whose
// target has gone is moved back instead. Only folders carrying the marker are touched.
void RemoveStaleStaging(const std::string& path);

}  // namespace troupe
