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
//    each with the next sequence number. The latest write of a key wins (the higher sequence
//    number; within one batch, the last occurrence). Older copies become stale.
//  - Durability, one sync a Put: a Put's files commit it themselves, as a journal: each file's
//    header says which Put it belongs to (its place and the Put's file count) and which commit
//    the Put follows (ssd::FileCommit), and Put returns once its files are fdatasynced. Their
//    directory entries were made durable beforehand: with options.sync the store pre-creates
//    empty files for the next sequence numbers, options.spare_files at a time, with one
//    directory fsync. So a 4 Ki-key Put (one file) costs one fdatasync instead of three (file,
//    manifest, directory). The manifest (paramserver/ssd_manifest.hpp, replaced atomically and
//    fsynced with its directory) is rewritten only when a compaction drops files, a Put commits
//    a tag alone, a Put needs more than options.journal_files files, or the files committed by
//    the journal since the last manifest reach options.journal_files (that Put pays the
//    manifest's two syncs too); the manifest then lists them. A Put that returned OK is
//    acknowledged: it survives a crash (kill -9; power loss with honest fdatasync).
//  - Recovery: Open reads the manifest, then every file above its sequence numbers in full
//    (every checksum) and replays the chain of journal Puts that follows the manifest's commit:
//    from the newest Put whose files are all present and sound back through the commits each
//    names. A Put torn by a crash (a file short or failing a checksum), a Put that failed and a
//    compaction's files written before its manifest are not in the chain and are deleted, with
//    the empty pre-created files and every file neither the manifest nor the chain holds; a
//    chain that names a commit whose files are missing or corrupt is kCorrupt naming the file
//    (an acknowledged write lost). Open then writes a manifest listing what it recovered (if
//    that write fails the Puts stay the journal's). Limit: a Put the journal committed and
//    that is the newest is dropped, not reported, if a file of it is corrupted after it was
//    acknowledged and before the next manifest (as a torn write would be).
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
//    returns Status kCorrupt naming the file; no parameter read from it is returned. A store
//    another owner created (options.owner: another shard's, another run's) is refused by Open,
//    kInvalidInput naming the folder: it is never recovered as if it were this owner's.
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
#include <optional>
#include <span>
#include <string>
#include <string_view>
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
  // false: no fdatasync/fsync, no pre-created files. Writes stay atomic and survive a killed
  // process (the page cache keeps them) but not a power loss (troupe's PS runs default to it:
  // paramserver.ssd_sync; the SSD bench measures both).
  bool sync = true;
  uint32_t journal_files = 64;  // files Puts commit by themselves before a manifest lists them
  uint32_t spare_files = 16;    // empty files pre-created per directory fsync (with sync)
  SsdWriteFault* write_fault = nullptr;  // fault injection (ssd_fault.hpp); not owned; may be null
  // true: Get first tells the kernel every block run it will read (posix_fadvise WILLNEED, 64
  // files at a time), so a device serves them concurrently instead of one read at a time. Helps
  // reads from the device; costs a system call a run when the blocks are cached.
  bool advise_reads = false;
  // Whose store this is (ssd_manifest.hpp). Set: a new store records it; an existing store whose
  // manifest records another is refused (kInvalidInput naming the folder). Unset: any store opens
  // (a tool reading a store), and a new one records {0, 0}.
  std::optional<ssd::StoreIdentity> owner;
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
  // kCorrupt naming the manifest or file, kInvalidInput for bad options, a layout that differs
  // from the store's or a store of another owner (options.owner), kIoError for the filesystem.
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
  // Bytes Open read to recover: each listed file's header and keys, each journal file whole.
  uint64_t recovery_bytes() const { return recovery_bytes_; }
  double stale_fraction() const;  // stale rows / stored rows (0 if none)
  const std::string& dir() const { return dir_; }
  const SsdStoreOptions& options() const { return options_; }
  // Path of the file with sequence number seq, and the files' sequence numbers, oldest first.
  std::string FilePath(uint64_t seq) const { return dir_ + "/" + ssd::FileName(seq); }
  std::vector<uint64_t> FileSeqs() const;
  // Whether `name` is one a store writes in its folder (the manifest, its temporary, a parameter
  // file): whoever empties a store's folder deletes only these.
  static bool IsStoreFileName(std::string_view name);

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

  struct JournalFile {  // a file above the manifest, read whole and sound
    ssd::FileCommit commit;
    std::vector<Key> keys;
    uint32_t block_rows = 1;
  };
  using Journal = std::map<uint64_t, JournalFile>;  // by sequence number

  SsdStore(std::string dir, const SsdStoreOptions& options);
  Status Recover();
  Status CheckOwner(const ssd::Manifest& manifest) const;
  Status RemoveOrphans();  // deletes parameter files the manifest does not list
  // Journal recovery (ssd_journal.cpp): ReplayJournal installs the chain of Puts committed after
  // commit point `base` (*max_seq: the highest seq of any parameter file in the directory).
  // Its steps: read every non-empty file with seq >= first whole (sound ones only); whether the
  // Put whose last file is `last` has all its files, agreeing; the chain back to `base`, by the
  // last file of each Put, oldest first.
  Status ReplayJournal(uint64_t base, uint64_t* max_seq);
  Status ReadJournal(uint64_t first, Journal* journal, uint64_t* max_seq);
  static bool WholePut(const Journal& journal, uint64_t last);
  Status JournalChain(const Journal& journal, uint64_t base, std::vector<uint64_t>* lasts) const;
  // With options.sync: makes sure files next_seq_ .. next_seq_ + n - 1 exist, with durable
  // directory entries (creating options.spare_files or n more, then one directory fsync).
  Status EnsureSpares(size_t n);
  static size_t FileRows(const SsdStoreOptions& options, uint32_t block_rows);
  // Writes keys/values as file next_seq_ (advancing it) and remembers it in *written.
  Status WriteFile(std::span<const Key> keys, std::span<const float> values,
                   std::vector<Written>* written, const ssd::FileCommit& commit = {});
  // Manifest of the current files minus `dropped`, plus `written`, and `tag`; durably replaces
  // MANIFEST. Then every file is the manifest's: the journal starts again after next_seq_ - 1.
  Status CommitManifest(const std::vector<Written>& written, const std::vector<uint64_t>& dropped,
                        uint64_t tag);
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
  ssd::StoreIdentity identity_;  // recorded in every manifest this store writes
  uint64_t commit_point_ = 0;    // the last file of the last commit (a Put's, or a manifest's)
  size_t journal_files_ = 0;     // files committed by Puts since the last manifest
  uint64_t spares_until_ = 0;    // files below this seq exist with durable entries (sync only)
  uint64_t recovery_bytes_ = 0;
  uint64_t disk_bytes_ = 0;
  uint64_t stored_rows_ = 0;
  uint32_t block_rows_ = 1;     // of the files this store writes
  size_t rows_per_file_ = 1;    // of the files this store writes (FileRows)
  ssd::ParamFile read_buffer_;  // reused by Get and Compact
};

}  // namespace troupe::paramserver
