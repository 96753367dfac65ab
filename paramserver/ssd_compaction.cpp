// SsdStore's compaction (contract in paramserver/ssd_store.hpp): the live rows of files whose
// stale share is high are rewritten into new files, the manifest is replaced by one without the
// old files, and only then are the old files deleted.
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "paramserver/ssd_store.hpp"

namespace troupe::paramserver {

Status SsdStore::ReadLiveRows(uint64_t seq, ssd::ParamFile* file, std::vector<Key>* keys,
                              std::vector<float>* values, CompactionStats* stats) {
  const FileInfo& info = files_.at(seq);
  if (info.live == 0) return Status::Ok();  // nothing to keep: no need to read it
  Status status = file->Read(FilePath(seq), seq, info.bytes, options_.layout.floats());
  if (!status.ok()) return status;
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

std::vector<uint64_t> SsdStore::CompactionVictims() const {
  std::vector<uint64_t> victims;
  for (const auto& [seq, info] : files_) {
    const double stale = static_cast<double>(info.count - info.live);
    if (stale >= options_.stale_fraction * static_cast<double>(info.count)) {
      victims.push_back(seq);
    }
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
    Status status =
        WriteFile(std::span<const Key>(*keys).subspan(begin, n),
                  std::span<const float>(*values).subspan(begin * floats, n * floats), written);
    if (!status.ok()) return status;
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

Status SsdStore::Compact(CompactionStats* stats) {
  const std::vector<uint64_t> victims = CompactionVictims();
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
  Status status = FlushStaged(true, &keys, &values, &written);
  if (status.ok()) status = CommitManifest(written, victims, tag_);
  if (!status.ok()) return status;
  const uint64_t disk_before = disk_bytes_;
  Install(written);  // the victims' live rows now point at the new files
  DropFiles(victims);
  for (const Written& w : written) {
    local.rows_moved += static_cast<int64_t>(w.keys.size());
    local.bytes_written +=
        static_cast<int64_t>(ssd::ParamFileBytes(w.keys.size(), options_.layout.floats()));
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

Status SsdStore::MaybeCompact(bool* compacted, CompactionStats* stats) {
  const bool run = disk_bytes_ > options_.compaction_threshold;
  if (compacted != nullptr) *compacted = run;
  return run ? Compact(stats) : Status::Ok();
}

}  // namespace troupe::paramserver
