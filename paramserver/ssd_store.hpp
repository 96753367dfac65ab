// SsdStore: SSD-PS, the SSD tier of the hierarchical parameter server ("Distributed Hierarchical
// GPU Parameter Server for Massive Scale Deep Learning Ads Systems", MLSys '20, section 6).
//
// One store per node, in one directory. Parameters live in parameter files of about
// options.file_bytes each (paramserver/ssd_file.hpp), their rows in checked blocks of about
// options.block_bytes (one SSD page); memory holds only the key -> (file, slot) map and per-file
// counts. The contract:
//  - Reads touch only the blocks that hold wanted rows: Get groups its keys by file and block,
//    reads each needed run of adjacent blocks once per call (one pread), checks every block's
//    checksum, then copies the wanted rows out. A row read costs one block however many files
//    the store has, so a batch's SSD cost is bounded by its rows, not by the store's history.
//    GetStats says how many files, blocks and bytes that took.
//  - Writes never update in place: Put writes its batch as one or more new files, sequentially,
//    each with the next sequence number, then the manifest. The latest write of a key wins (the
//    higher sequence number; within one batch, the last occurrence). Older copies become stale.
//  - Durability: Put and Compact fdatasync their new files, then replace the manifest atomically
//    (paramserver/ssd_manifest.hpp) and fsync the directory. A Put that returned OK is
//    acknowledged: it survives a crash (kill -9; power loss with honest fsync). Open recovers
//    from the manifest and deletes files it does not list (unacknowledged writes).
//  - Compaction keeps the store's size bounded by its live rows: with f = options.stale_fraction,
//    MaybeCompact (once disk_bytes() passes options.compaction_threshold) merges the files with
//    the fewest live rows, just enough that afterwards stale rows are under f of the stored rows
//    and the files number at most live / ((1 - f) * rows a file holds) + 1. Each call therefore
//    merges about what the Puts since the last one made stale (incremental, bounded per batch),
//    never the whole store. Compact merges every file with a stale row or room left (a full
//    compaction). Both are synchronous: the owner (e.g. the SSD-PS actor) calls them between
//    batches. Compaction never loses the latest value of a key, and a crash during it leaves
//    either the old or the new files in the manifest.
//  - Bad input: a corrupt or truncated parameter file or manifest fails its checks and the call
//    returns Status kCorrupt naming the file; no parameter read from it is returned.
//  - Failed writes (a real I/O error, or options.write_fault injecting EIO/ENOSPC): the call
//    returns kIoError naming the file, deletes the files it had written (best effort; the next
//    Open deletes any it could not) and leaves the store, in memory and on disk, as before the
//    call. A later call may succeed (the fault ended): nothing needs repairing first.
//  - Tag: Put(batch, tag) commits an owner's u64 (e.g. "every update up to step s is here") in the
//    same manifest as the batch's files, so after a crash tag() says exactly what is durable.
// Not thread-safe: one owner calls it (an actor, a pipeline stage). Values are raw floats of
// options.layout (embedding then optimizer state); the store never interprets them.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "paramserver/ssd_file.hpp"
#include "paramserver/ssd_manifest.hpp"
#include "paramserver/types.hpp"

namespace troupe::paramserver {

struct SsdStoreOptions {
  uint64_t file_bytes = 4ull << 20;  // target file size; a Put of more rows writes several files
  uint64_t block_bytes = ssd::kDefaultBlockBytes;  // read unit: rows a block holds (at least 1)
  ValueLayout layout;                          // every row's floats; must match an existing store's
  uint64_t compaction_threshold = 1ull << 30;  // disk bytes above which MaybeCompact compacts
  double stale_fraction = 0.5;  // compaction keeps stale rows / stored rows under this, in (0, 1)
  // false: no fdatasync/fsync. Writes stay atomic and survive a killed process (the page cache
  // keeps them) but not a power loss. For tests of the logic; production keeps true.
  bool sync = true;
  SsdWriteFault* write_fault = nullptr;  // fault injection (ssd_fault.hpp); not owned; may be null
  // true: Get first tells the kernel every block run it will read (posix_fadvise WILLNEED, 64
  // files at a time), so a device serves them concurrently instead of one read at a time. Helps
  // reads from the device; costs a system call a run when the blocks are cached.
  bool advise_reads = false;
};

// Added to (not reset) by each Get.
struct GetStats {
  int64_t files_read = 0;
  int64_t blocks_read = 0;
  int64_t bytes_read = 0;  // the blocks read
  int64_t keys_found = 0;
  int64_t keys_missing = 0;
};

// Added to (not reset) by each Compact.
struct CompactionStats {
  int64_t files_merged = 0;   // old files dropped
  int64_t files_written = 0;  // new files of their live rows
  int64_t rows_moved = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t bytes_reclaimed = 0;  // disk_bytes() before minus after
};

class SsdStore {
 public:
  // Opens (creating if needed) the store in dir and recovers it from its manifest: every file it
  // lists is checked (header and keys) and indexed; unlisted parameter files are deleted. Errors:
  // kCorrupt naming the manifest or file, kInvalidInput for bad options or a layout that
  // differs from the store's, kIoError for the filesystem.
  static Status Open(const std::string& dir, const SsdStoreOptions& options,
                     std::unique_ptr<SsdStore>* store);

  SsdStore(const SsdStore&) = delete;
  SsdStore& operator=(const SsdStore&) = delete;

  // Writes batch (rows of options.layout) as new files and returns once they and the manifest
  // are durable. On error nothing of the batch is visible (its files, if any, are orphans the
  // next Open deletes). An empty batch is a no-op.
  Status Put(const RowBatch& batch);
  // The same, and commits `tag` with the batch (an empty batch then still commits the tag).
  Status Put(const RowBatch& batch, uint64_t tag);

  // Replaces *out with one row per key found, in the order of keys (a repeated key repeats);
  // keys not in the store are left out (compare out->keys) and counted in stats->keys_missing.
  // Reads each block holding a wanted key once. On error *out is empty. stats may be null.
  Status Get(std::span<const Key> keys, RowBatch* out, GetStats* stats);

  // Merges every file with a stale row or room for more (see above). stats may be null.
  Status Compact(CompactionStats* stats = nullptr);
  // If disk_bytes() > options.compaction_threshold and the bounds above do not hold, merges the
  // fewest-live files until they do; *compacted says whether it merged anything.
  Status MaybeCompact(bool* compacted = nullptr, CompactionStats* stats = nullptr);

  bool Contains(Key key) const { return index_.contains(key); }
  uint64_t tag() const { return tag_; }                // the last committed tag (0: never set)
  std::vector<Key> Keys() const;                       // every stored key, sorted
  size_t size() const { return index_.size(); }        // distinct keys
  uint64_t disk_bytes() const { return disk_bytes_; }  // sum of live files' sizes
  size_t file_count() const { return files_.size(); }
  size_t RowsPerFile() const { return rows_per_file_; }  // rows a full file holds
  // The most files compaction lets the store keep for its live rows (see above).
  size_t FileBound() const;
  uint64_t stored_rows() const { return stored_rows_; }  // rows in all files, stale included
  double stale_fraction() const;                         // stale rows / stored rows (0 if none)
  const std::string& dir() const { return dir_; }
  const SsdStoreOptions& options() const { return options_; }
  // Path of the file with sequence number seq, and the files' sequence numbers, oldest first.
  std::string FilePath(uint64_t seq) const { return dir_ + "/" + ssd::FileName(seq); }
  std::vector<uint64_t> FileSeqs() const;

 private:
  struct Location {
    uint64_t seq = 0;
    uint32_t slot = 0;
  };
  struct FileInfo {
    uint64_t count = 0;
    uint64_t bytes = 0;
    uint64_t live = 0;  // rows that are still their key's latest value
    uint32_t block_rows = 1;
  };
  struct Written {  // a file a Put or Compact wrote, not yet in the manifest
    uint64_t seq = 0;
    std::vector<Key> keys;
    uint32_t block_rows = 1;
  };

  SsdStore(std::string dir, const SsdStoreOptions& options);
  Status Recover();
  Status RemoveOrphans();  // deletes parameter files the manifest does not list
  static size_t FileRows(const SsdStoreOptions& options, uint32_t block_rows);
  // Writes keys/values as file next_seq_ (advancing it) and remembers it in *written.
  Status WriteFile(std::span<const Key> keys, std::span<const float> values,
                   std::vector<Written>* written);
  // Manifest of the current files minus `dropped`, plus `written`, and `tag`; durably replaces
  // MANIFEST.
  Status CommitManifest(const std::vector<Written>& written, const std::vector<uint64_t>& dropped,
                        uint64_t tag) const;
  // After a failed write: deletes the files it wrote (and the one it was writing), best effort.
  void RemoveUncommitted(const std::vector<Written>& written, uint64_t failed_seq) const;
  // After CommitManifest: points keys at the written files (older copies turn stale).
  void Install(const std::vector<Written>& written);
  // Get's steps for one file's wanted rows (wants sorted by slot): open it (advising its runs
  // with options.advise_reads), then read the runs of blocks into out's values. A run is a
  // stretch of wanted blocks with no unwanted block between them; RunEnd finds the one at i.
  struct Want {
    uint64_t seq;
    uint32_t slot;
    uint32_t row;  // out's row
  };
  static size_t RunEnd(const ssd::FileShape& shape, std::span<const Want> wants, size_t i,
                       uint64_t* first, uint64_t* last);
  Status OpenFor(std::span<const Want> wants, int* fd);
  Status ReadWanted(std::span<const Want> wants, int fd, RowBatch* out, GetStats* stats);
  // Compaction (ssd_compaction.cpp): the files to merge (all: Compact; else just enough for the
  // bounds, fewest live rows first); whether the bounds hold; appends seq's live rows to keys and
  // values; writes staged rows as whole files (all of them if `all`), keeping the remainder;
  // forgets files the manifest no longer lists and deletes them.
  std::vector<uint64_t> CompactionVictims(bool all) const;
  Status Merge(const std::vector<uint64_t>& victims, CompactionStats* stats);
  bool WithinBounds(uint64_t files, uint64_t stored_rows) const;
  Status ReadLiveRows(uint64_t seq, ssd::ParamFile* file, std::vector<Key>* keys,
                      std::vector<float>* values, CompactionStats* stats);
  Status FlushStaged(bool all, std::vector<Key>* keys, std::vector<float>* values,
                     std::vector<Written>* written);
  void DropFiles(const std::vector<uint64_t>& seqs);

  std::string dir_;
  SsdStoreOptions options_;
  absl::flat_hash_map<Key, Location> index_;
  std::map<uint64_t, FileInfo> files_;  // by sequence number
  uint64_t next_seq_ = 1;
  uint64_t tag_ = 0;
  uint64_t disk_bytes_ = 0;
  uint64_t stored_rows_ = 0;
  uint32_t block_rows_ = 1;     // of the files this store writes
  size_t rows_per_file_ = 1;    // of the files this store writes (FileRows)
  ssd::ParamFile read_buffer_;  // reused by Get and Compact
};

}  // namespace troupe::paramserver
