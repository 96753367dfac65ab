// The SSD-PS manifest: which parameter files make up a store (paramserver/ssd_store.hpp).
//
// One file, MANIFEST, in the store's directory. It is replaced atomically — written to
// MANIFEST.tmp, fsynced, renamed over MANIFEST, then the directory fsynced — so after a crash it
// is either the old or the new list, never a mix. A parameter file not in it is either a Put's
// that the journal committed (above next_seq, its header says so: ssd_store.hpp) or
// unacknowledged (a compaction or Put that crashed or failed first) and deleted when the store
// opens.
// Layout (native little-endian): magic "TRPSSDM1", u32 version (3), u32 floats, u64 next_seq,
// u64 tag, u64 run, u64 shard, u64 files, then per file u64 seq, u64 count, u64 bytes; last a u32
// CRC32C of all before it. The tag is the owner's, committed atomically with the file list
// (ssd_store.hpp); run and shard say whose store it is (StoreIdentity), written when the store is
// created and never changed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "paramserver/ssd_fault.hpp"

namespace troupe::paramserver::ssd {

inline constexpr char kManifestName[] = "MANIFEST";
inline constexpr char kManifestTempName[] = "MANIFEST.tmp";

struct ManifestFile {
  uint64_t seq = 0;    // the file's sequence number (its name, FileName(seq))
  uint64_t count = 0;  // rows in it
  uint64_t bytes = 0;  // its exact size
};

// Whose store it is: the owner's run (an id it draws per run) and its shard. A store recovers
// only for the identity that created it, so that a folder swapped for another shard's or another
// run's store is refused rather than silently trained from.
struct StoreIdentity {
  uint64_t run = 0;
  uint64_t shard = 0;
  bool operator==(const StoreIdentity&) const = default;
};

struct Manifest {
  int32_t floats = 0;     // floats per row (ValueLayout::floats()) of every file
  uint64_t next_seq = 1;  // the next file's sequence number; above every listed seq
  uint64_t tag = 0;       // the owner's progress mark (SsdStore::Put), 0 if never set
  StoreIdentity identity;
  std::vector<ManifestFile> files;
};

// Replaces dir/MANIFEST with `manifest` (temp file, fdatasync, rename, fsync dir; without `sync`
// no fdatasync or fsync: still atomic, and durable against a killed process but not power loss).
// When it returns OK the new list survives a crash; on error the old MANIFEST (if any) stays.
// `fault` (may be null) can fail the temp file's write (ssd_fault.hpp). *replaced (if given) says
// whether the rename happened: then MANIFEST is the new list even if the directory's fsync failed.
Status WriteManifest(const std::string& dir, const Manifest& manifest, bool sync,
                     SsdWriteFault* fault = nullptr, bool* replaced = nullptr);

// Reads dir/MANIFEST. *found is false (and OK returned) when there is none; a manifest that is
// truncated, has a bad magic or fails its checksum is kCorrupt naming the file.
Status ReadManifest(const std::string& dir, Manifest* manifest, bool* found);

}  // namespace troupe::paramserver::ssd
