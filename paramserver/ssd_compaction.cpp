// SsdStore's compaction (contract in paramserver/ssd_store.hpp): the live rows of the files with
// the fewest live rows are rewritten into new, full files, the manifest is replaced by one
// without the old files, and only then are the old files deleted. MaybeCompact merges just enough
// files to bring the store back within its bounds (stale share, file count); Compact all of them.
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/status_macros.hpp"
#include "paramserver/ssd_store.hpp"

namespace troupe::paramserver {

Status SsdStore::ReadLiveRows(uint64_t seq, ssd::ParamFile* file, std::vector<Key>* keys,
                              std::vector<float>* values, CompactionStats* stats) {
  const FileInfo& info = files_.at(seq);
  if (info.live == 0) return Status::Ok();  // nothing to keep: no need to read it
  RETURN_IF_ERROR(file->Read(FilePath(seq), seq, info.bytes, options_.layout.floats()));
  stats->bytes_read += static_cast<int64_t>(file->bytes());
  const size_t floats = static_cast<size_t>(options_.layout.floats());
  for (uint64_t slot = 0; slot < file->count(); ++slot) {
    const Key key = file->key(slot);
    const auto it = index_.find(key);
    if (it == index_.end() || it->second.seq != seq || it->second.slot != slot) continue;
    keys->push_back(key);
    values->resize(values->size() + floats);
    file->CopyRow(slot, values->data() + values->size() - floats);
  }
  return Status::Ok();
}

size_t SsdStore::FileBound() const {
  const double per_file = (1 - options_.stale_fraction) * static_cast<double>(RowsPerFile());
  return static_cast<size_t>(static_cast<double>(index_.size()) / per_file) + 1;
}

bool SsdStore::WithinBounds(uint64_t files, uint64_t stored_rows) const {
  const uint64_t stale = stored_rows - index_.size();
  return files <= FileBound() &&
         (stale == 0 ||
          static_cast<double>(stale) < options_.stale_fraction * static_cast<double>(stored_rows));
}

std::vector<uint64_t> SsdStore::CompactionVictims(bool all) const {
  const uint64_t per_file = RowsPerFile();
  // Fewest live rows first (ties: oldest first): the files whose merge reclaims the most.
  std::vector<std::pair<uint64_t, uint64_t>> by_live;  // (live, seq)
  for (const auto& [seq, info] : files_) {
    const bool full_and_live = info.live == info.count && info.count >= per_file;
    if (!all || !full_and_live) by_live.emplace_back(info.live, seq);
  }
  std::sort(by_live.begin(), by_live.end());
  std::vector<uint64_t> victims;
  if (all) {
    // One partial file alone gains nothing by being rewritten.
    if (by_live.size() == 1 && by_live[0].first == files_.at(by_live[0].second).count) return {};
    for (const auto& [live, seq] : by_live) victims.push_back(seq);
    return victims;
  }
  // The shortest prefix after whose merge the bounds hold (merging every file always does).
  uint64_t files = files_.size(), stored = stored_rows_, merged_live = 0, merged_files = 0;
  for (const auto& [live, seq] : by_live) {
    if (WithinBounds(files, stored)) break;
    const FileInfo& info = files_.at(seq);
    victims.push_back(seq);
    stored -= info.count - info.live;
    merged_live += live;
    ++merged_files;
    files = files_.size() - merged_files + (merged_live + per_file - 1) / per_file;
  }
  return victims;
}

Status SsdStore::FlushStaged(bool all, std::vector<Key>* keys, std::vector<float>* values,
                             std::vector<Written>* written) {
  const size_t per_file = RowsPerFile();
  const size_t floats = static_cast<size_t>(options_.layout.floats());
  size_t begin = 0;
  while (keys->size() - begin >= per_file || (all && begin < keys->size())) {
    const size_t n = std::min(per_file, keys->size() - begin);
    RETURN_IF_ERROR(WriteFile(std::span<const Key>(*keys).subspan(begin, n),
                              std::span<const float>(*values).subspan(begin * floats, n * floats),
                              written));
    begin += n;
  }
  keys->erase(keys->begin(), keys->begin() + static_cast<ptrdiff_t>(begin));
  values->erase(values->begin(), values->begin() + static_cast<ptrdiff_t>(begin * floats));
  return Status::Ok();
}

void SsdStore::DropFiles(const std::vector<uint64_t>& seqs) {
  for (uint64_t seq : seqs) {
    const FileInfo& info = files_.at(seq);
    disk_bytes_ -= info.bytes;
    stored_rows_ -= info.count;
    files_.erase(seq);
    // The manifest no longer lists it: a failed unlink leaves an orphan the next Open deletes.
    ::unlink(FilePath(seq).c_str());
  }
}

Status SsdStore::Compact(CompactionStats* stats) { return Merge(CompactionVictims(true), stats); }

Status SsdStore::MaybeCompact(bool* compacted, CompactionStats* stats) {
  std::vector<uint64_t> victims;
  if (disk_bytes_ > options_.compaction_threshold) victims = CompactionVictims(false);
  if (compacted != nullptr) *compacted = !victims.empty();
  return Merge(victims, stats);
}

Status SsdStore::Merge(const std::vector<uint64_t>& victims, CompactionStats* stats) {
  if (victims.empty()) return Status::Ok();
  CompactionStats local;
  std::vector<Written> written;
  std::vector<Key> keys;  // live rows read, not yet written
  std::vector<float> values;
  for (uint64_t seq : victims) {
    Status status = ReadLiveRows(seq, &read_buffer_, &keys, &values, &local);
    if (status.ok()) status = FlushStaged(false, &keys, &values, &written);
    if (!status.ok()) {
      RemoveUncommitted(written, 0);
      return status;
    }
  }
  RETURN_IF_ERROR(FlushStaged(true, &keys, &values, &written));
  RETURN_IF_ERROR(CommitManifest(written, victims, tag_));
  const uint64_t disk_before = disk_bytes_;
  Install(written);  // the victims' live rows now point at the new files
  DropFiles(victims);
  for (const Written& w : written) {
    local.rows_moved += static_cast<int64_t>(w.keys.size());
    local.bytes_written += static_cast<int64_t>(
        ssd::ParamFileBytes(w.keys.size(), options_.layout.floats(), w.block_rows));
  }
  local.files_merged = static_cast<int64_t>(victims.size());
  local.files_written = static_cast<int64_t>(written.size());
  local.bytes_reclaimed = static_cast<int64_t>(disk_before) - static_cast<int64_t>(disk_bytes_);
  if (stats != nullptr) {
    stats->files_merged += local.files_merged;
    stats->files_written += local.files_written;
    stats->rows_moved += local.rows_moved;
    stats->bytes_read += local.bytes_read;
    stats->bytes_written += local.bytes_written;
    stats->bytes_reclaimed += local.bytes_reclaimed;
  }
  return Status::Ok();
}

}  // namespace troupe::paramserver
