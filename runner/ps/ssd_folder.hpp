// The SSD-PS folders of a parameter-server run (paramserver.ssd_dir): checked while the run is
// planned, each node's emptied when the run starts.
//
// Node m's SSD-PS lives in <ssd_dir>/node-<m>, a scratch folder troupe marks as its own
// (runner/output_folder.hpp, kind "ssd-ps"). A later run empties it only when everything in it is
// troupe's: the marker and the files the store writes (SsdStore::IsStoreFileName). A file a user
// added, or a folder troupe never marked, makes the folder the user's: the run is refused with one
// InvalidInput line naming the folder, and nothing is deleted. The root itself must be a folder,
// or creatable as one, on a filesystem that holds files (not /proc, /sys, nor read-only).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.hpp"

namespace troupe {

// Ok when a run of `nodes` shards may use `ssd_dir` ("" : the run's own scratch, always Ok): the
// root can hold the node folders, and each node-<m> that exists is troupe's and the store's alone.
// Writes nothing. `what` names the field ("configs/x.textproto: paramserver.ssd_dir").
Status CheckSsdDir(const std::string& ssd_dir, int32_t nodes, const std::string& what);

// Makes `dir` (one node's folder) an empty ssd-ps scratch folder, after the same check as above:
// a folder holding anything troupe's store did not write is refused, never emptied.
Status ResetSsdNodeFolder(const std::string& dir, const std::string& what);

}  // namespace troupe
