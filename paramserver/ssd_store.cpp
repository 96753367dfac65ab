#include "paramserver/ssd_store.hpp"

#include <absl/container/flat_hash_set.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "base/status_macros.hpp"

namespace troupe::paramserver {

namespace fs = std::filesystem;

namespace {
constexpr size_t kOpenFiles = 64;  // files a Get holds open at once (their reads advised together)
}  // namespace

SsdStore::SsdStore(std::string dir, const SsdStoreOptions& options)
    : dir_(std::move(dir)),
      options_(options),
      block_rows_(ssd::BlockRows(options.layout.floats(), options.block_bytes)),
      rows_per_file_(FileRows(options, block_rows_)) {}

Status SsdStore::Open(const std::string& dir, const SsdStoreOptions& options,
                      std::unique_ptr<SsdStore>* store) {
  store->reset();
  if (options.layout.floats() <= 0 || options.file_bytes == 0 || options.block_bytes == 0 ||
      !(options.stale_fraction > 0) || !(options.stale_fraction < 1)) {
    return Status::InvalidInput(dir +
                                ": bad SsdStore options (layout floats, file_bytes, block_bytes "
                                "or stale_fraction)");
  }
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return Status::IoError(dir + ": create directory: " + error.message());
  std::unique_ptr<SsdStore> opened(new SsdStore(dir, options));
  RETURN_IF_ERROR(opened->Recover());
  *store = std::move(opened);
  return Status::Ok();
}

Status SsdStore::Recover() {
  ssd::Manifest manifest;
  bool found = false;
  RETURN_IF_ERROR(ssd::ReadManifest(dir_, &manifest, &found));
  if (found && manifest.floats != options_.layout.floats()) {
    return Status::InvalidInput(dir_ + "/" + ssd::kManifestName + ": rows of " +
                                std::to_string(manifest.floats) + " floats, options say " +
                                std::to_string(options_.layout.floats()));
  }
  if (found) {
    RETURN_IF_ERROR(CheckOwner(manifest));
    next_seq_ = manifest.next_seq;
    tag_ = manifest.tag;
    identity_ = manifest.identity;
  } else if (options_.owner) {
    identity_ = *options_.owner;
  }
  std::sort(manifest.files.begin(), manifest.files.end(),
            [](const ssd::ManifestFile& a, const ssd::ManifestFile& b) { return a.seq < b.seq; });
  std::vector<Written> files(1);
  for (const ssd::ManifestFile& f : manifest.files) {
    files[0].seq = f.seq;
    RETURN_IF_ERROR(ssd::ReadParamKeys(FilePath(f.seq), f.seq, f.bytes, manifest.floats,
                                       &files[0].keys, &files[0].block_rows));
    recovery_bytes_ += ssd::kFileHeaderBytes + files[0].keys.size() * sizeof(Key);
    Install(files);
  }
  // The Puts the journal committed after the manifest. New files take sequence numbers above
  // every file seen, so a left-out file (torn, failed, spare) is never mistaken for a new one.
  uint64_t max_seq = 0;
  RETURN_IF_ERROR(ReplayJournal(manifest.next_seq - 1, &max_seq));
  next_seq_ = std::max(next_seq_, max_seq + 1);
  // A manifest that lists the recovered Puts (a new store starts with one), so from now on a
  // corrupt file of theirs is an error, never taken for a torn write. Best effort: on a failing
  // disk the old manifest stays and the Puts stay the journal's, which recovers them as well.
  if (!found || max_seq >= manifest.next_seq) (void)CommitManifest({}, {}, tag_);
  return RemoveOrphans();
}

Status SsdStore::CheckOwner(const ssd::Manifest& manifest) const {
  if (!options_.owner || manifest.identity == *options_.owner) return Status::Ok();
  const ssd::StoreIdentity& mine = *options_.owner;
  const std::string why = manifest.identity.shard != mine.shard
                              ? "holds shard " + std::to_string(manifest.identity.shard) +
                                    "'s SSD-PS, not shard " + std::to_string(mine.shard) + "'s"
                              : "holds an SSD-PS another run wrote, not this run's";
  return Status::InvalidInput(dir_ + ": " + why + "; refusing to recover from it");
}

bool SsdStore::IsStoreFileName(std::string_view name) {
  uint64_t seq = 0;
  return name == ssd::kManifestName || name == ssd::kManifestTempName ||
         ssd::ParseFileName(name, &seq);
}

Status SsdStore::RemoveOrphans() {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_, error)) {
    const std::string name = entry.path().filename().string();
    uint64_t seq = 0;
    const bool orphan = ssd::ParseFileName(name, &seq) && !files_.contains(seq);
    if (orphan || name == ssd::kManifestTempName) {
      if (::unlink(entry.path().c_str()) != 0) return ssd::ErrnoStatus("unlink", entry.path());
    }
  }
  if (error) return Status::IoError(dir_ + ": list directory: " + error.message());
  return Status::Ok();
}

size_t SsdStore::FileRows(const SsdStoreOptions& options, uint32_t block_rows) {
  const int32_t floats = options.layout.floats();
  // An over-estimate (it leaves out the blocks' CRCs), lowered until the file fits.
  const uint64_t row_bytes = sizeof(Key) + ssd::FileShape{0, 1, floats, 1}.record_bytes();
  uint64_t rows = options.file_bytes / row_bytes + 1;
  while (rows > 1 && ssd::ParamFileBytes(rows, floats, block_rows) > options.file_bytes) --rows;
  return static_cast<size_t>(rows);
}

Status SsdStore::WriteFile(std::span<const Key> keys, std::span<const float> values,
                           std::vector<Written>* written, const ssd::FileCommit& commit) {
  const uint64_t seq = next_seq_++;
  Status status = ssd::WriteParamFile(FilePath(seq), seq, keys, values, options_.layout.floats(),
                                      block_rows_, options_.sync, options_.write_fault, commit);
  if (!status.ok()) {
    RemoveUncommitted(*written, seq);
    return status;
  }
  written->push_back({seq, std::vector<Key>(keys.begin(), keys.end()), block_rows_});
  return Status::Ok();
}

Status SsdStore::CommitManifest(const std::vector<Written>& written,
                                const std::vector<uint64_t>& dropped, uint64_t tag) {
  ssd::Manifest manifest;
  manifest.floats = options_.layout.floats();
  manifest.next_seq = next_seq_;
  manifest.tag = tag;
  manifest.identity = identity_;
  manifest.files.reserve(files_.size() + written.size());
  for (const auto& [seq, info] : files_) {
    if (std::find(dropped.begin(), dropped.end(), seq) != dropped.end()) continue;
    manifest.files.push_back({seq, info.count, info.bytes});
  }
  for (const Written& w : written) {
    manifest.files.push_back(
        {w.seq, w.keys.size(),
         ssd::ParamFileBytes(w.keys.size(), options_.layout.floats(), w.block_rows)});
  }
  bool replaced = false;
  Status status =
      ssd::WriteManifest(dir_, manifest, options_.sync, options_.write_fault, &replaced);
  // Once renamed, MANIFEST lists the written files: they must stay even if the fsync failed.
  if (!status.ok() && !replaced) RemoveUncommitted(written, 0);
  if (replaced) {  // the journal's Puts must now follow this manifest's commit point
    commit_point_ = next_seq_ - 1;
    journal_files_ = 0;
  }
  return status;
}

void SsdStore::RemoveUncommitted(const std::vector<Written>& written, uint64_t failed_seq) const {
  // No manifest lists these files: deleting them (or, if this fails too, the next Open) loses
  // nothing acknowledged.
  for (const Written& w : written) ::unlink(FilePath(w.seq).c_str());
  if (failed_seq != 0) ::unlink(FilePath(failed_seq).c_str());
}

std::vector<Key> SsdStore::Keys() const {
  std::vector<Key> keys;
  keys.reserve(index_.size());
  for (const auto& entry : index_) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

void SsdStore::Install(const std::vector<Written>& written) {
  for (const Written& w : written) {
    const uint64_t bytes =
        ssd::ParamFileBytes(w.keys.size(), options_.layout.floats(), w.block_rows);
    files_[w.seq] = {w.keys.size(), bytes, w.keys.size(), w.block_rows};
    disk_bytes_ += bytes;
    stored_rows_ += w.keys.size();
    for (uint32_t slot = 0; slot < w.keys.size(); ++slot) {
      auto [it, inserted] = index_.try_emplace(w.keys[slot], Location{w.seq, slot});
      if (inserted) continue;
      FileInfo& older = files_[it->second.seq];
      --older.live;
      it->second = {w.seq, slot};
    }
  }
}

Status SsdStore::Put(const RowBatch& batch) { return Put(batch, tag_); }

Status SsdStore::Put(const RowBatch& batch, uint64_t tag) {
  const size_t floats = static_cast<size_t>(options_.layout.floats());
  if (batch.values.size() != batch.keys.size() * floats) {
    return Status::InvalidInput(dir_ + ": Put batch has " + std::to_string(batch.values.size()) +
                                " floats for " + std::to_string(batch.keys.size()) + " keys");
  }
  if (batch.keys.empty() && tag == tag_) return Status::Ok();
  // The last occurrence of each key wins; `rows` lists the winners in batch order.
  std::vector<uint32_t> rows;
  rows.reserve(batch.keys.size());
  absl::flat_hash_set<Key> seen;
  seen.reserve(batch.keys.size());
  for (size_t i = batch.keys.size(); i-- > 0;) {
    if (seen.insert(batch.keys[i]).second) rows.push_back(static_cast<uint32_t>(i));
  }
  std::reverse(rows.begin(), rows.end());
  if (rows.empty()) {  // a tag alone: the manifest commits it
    Status status = CommitManifest({}, {}, tag);
    if (status.ok()) tag_ = tag;
    return status;
  }
  const size_t per_file = RowsPerFile();
  const size_t files = (rows.size() + per_file - 1) / per_file;
  // Small Puts commit by their own files (one fdatasync each); bigger ones by the manifest.
  const bool journal = files <= std::min<size_t>(options_.journal_files, UINT16_MAX);
  if (journal) {
    RETURN_IF_ERROR(EnsureSpares(files));
  }
  ssd::FileCommit commit{tag, commit_point_, 0, static_cast<uint16_t>(journal ? files : 0)};
  std::vector<Written> written;
  std::vector<Key> keys;
  std::vector<float> values;
  for (size_t begin = 0; begin < rows.size(); begin += per_file) {
    const size_t end = std::min(rows.size(), begin + per_file);
    if (journal) commit.index = static_cast<uint16_t>(begin / per_file + 1);
    keys.resize(end - begin);
    values.resize((end - begin) * floats);
    for (size_t i = begin; i < end; ++i) {
      keys[i - begin] = batch.keys[rows[i]];
      std::memcpy(values.data() + (i - begin) * floats, batch.values.data() + rows[i] * floats,
                  floats * sizeof(float));
    }
    RETURN_IF_ERROR(WriteFile(keys, values, &written, commit));
  }
  if (!journal || journal_files_ + files >= options_.journal_files) {
    RETURN_IF_ERROR(CommitManifest(written, {}, tag));
  } else {
    journal_files_ += files;
    commit_point_ = written.back().seq;
  }
  Install(written);
  tag_ = tag;
  return Status::Ok();
}

Status SsdStore::Get(std::span<const Key> keys, RowBatch* out, GetStats* stats) {
  out->keys.clear();
  out->values.clear();
  std::vector<Want> wants;
  wants.reserve(keys.size());
  out->keys.reserve(keys.size());
  int64_t missing = 0;
  for (Key key : keys) {
    const auto it = index_.find(key);
    if (it == index_.end()) {
      ++missing;
      continue;
    }
    wants.push_back({it->second.seq, it->second.slot, static_cast<uint32_t>(out->keys.size())});
    out->keys.push_back(key);
  }
  out->values.resize(out->keys.size() * static_cast<size_t>(options_.layout.floats()));
  std::sort(wants.begin(), wants.end(), [](const Want& a, const Want& b) {
    return a.seq != b.seq ? a.seq < b.seq : a.slot < b.slot;
  });
  GetStats local;
  for (size_t i = 0; i < wants.size();) {
    // Up to kOpenFiles files at a time: opened (and their reads advised) first, then read.
    std::vector<std::pair<std::span<const Want>, int>> open;
    Status status;
    while (status.ok() && i < wants.size() && open.size() < kOpenFiles) {
      size_t end = i;
      while (end < wants.size() && wants[end].seq == wants[i].seq) ++end;
      const std::span<const Want> file_wants = std::span<const Want>(wants).subspan(i, end - i);
      int fd = -1;
      status = OpenFor(file_wants, &fd);
      if (status.ok()) open.emplace_back(file_wants, fd);
      i = end;
    }
    for (const auto& [file_wants, fd] : open) {
      if (status.ok()) status = ReadWanted(file_wants, fd, out, &local);
      ::close(fd);
    }
    if (!status.ok()) {
      out->keys.clear();
      out->values.clear();
      return status;
    }
  }
  if (stats != nullptr) {
    stats->files_read += local.files_read;
    stats->blocks_read += local.blocks_read;
    stats->bytes_read += local.bytes_read;
    stats->keys_found += static_cast<int64_t>(out->keys.size());
    stats->keys_missing += missing;
  }
  return Status::Ok();
}

size_t SsdStore::RunEnd(const ssd::FileShape& shape, std::span<const Want> wants, size_t i,
                        uint64_t* first, uint64_t* last) {
  *first = *last = shape.BlockOf(wants[i].slot);
  while (i < wants.size() && shape.BlockOf(wants[i].slot) <= *last + 1) {
    *last = shape.BlockOf(wants[i++].slot);
  }
  return i;
}

Status SsdStore::OpenFor(std::span<const Want> wants, int* fd) {
  const uint64_t seq = wants.front().seq;
  const FileInfo& info = files_.at(seq);
  RETURN_IF_ERROR(ssd::OpenParamFile(FilePath(seq), info.bytes, fd));
  if (!options_.advise_reads) return Status::Ok();
  const ssd::FileShape shape{seq, info.count, options_.layout.floats(), info.block_rows};
  uint64_t first = 0, last = 0;
  for (size_t i = 0; i < wants.size();) {
    i = RunEnd(shape, wants, i, &first, &last);
    const uint64_t offset = shape.BlockOffset(first);
    // Advice only: a failure leaves the read below to fetch the blocks itself.
    (void)::posix_fadvise(*fd, static_cast<off_t>(offset),
                          static_cast<off_t>(shape.BlockOffset(last + 1) - offset),
                          POSIX_FADV_WILLNEED);
  }
  return Status::Ok();
}

Status SsdStore::ReadWanted(std::span<const Want> wants, int fd, RowBatch* out, GetStats* stats) {
  const uint64_t seq = wants.front().seq;
  const FileInfo& info = files_.at(seq);
  const ssd::FileShape shape{seq, info.count, options_.layout.floats(), info.block_rows};
  const std::string path = FilePath(seq);
  const size_t floats = static_cast<size_t>(options_.layout.floats());
  Status status;
  for (size_t i = 0; status.ok() && i < wants.size();) {
    // A run: wanted blocks with no unwanted block between them, read with one pread.
    uint64_t first = 0, last = 0;
    const size_t end = RunEnd(shape, wants, i, &first, &last);
    status = read_buffer_.ReadBlocks(fd, path, shape, first, last - first + 1);
    for (; status.ok() && i < end; ++i) {
      if (read_buffer_.key(wants[i].slot) != out->keys[wants[i].row]) {
        status = Status::Corrupt(path + ": key at slot " + std::to_string(wants[i].slot) +
                                 " is not the indexed key");
        break;
      }
      read_buffer_.CopyRow(wants[i].slot, out->values.data() + wants[i].row * floats);
    }
    stats->blocks_read += static_cast<int64_t>(last - first + 1);
    stats->bytes_read += static_cast<int64_t>(read_buffer_.bytes());
  }
  ++stats->files_read;
  return status;
}

double SsdStore::stale_fraction() const {
  if (stored_rows_ == 0) return 0;
  return static_cast<double>(stored_rows_ - index_.size()) / static_cast<double>(stored_rows_);
}

std::vector<uint64_t> SsdStore::FileSeqs() const {
  std::vector<uint64_t> seqs;
  seqs.reserve(files_.size());
  for (const auto& entry : files_) seqs.push_back(entry.first);
  return seqs;
}

}  // namespace troupe::paramserver
