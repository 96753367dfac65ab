// SsdStore's journal (contract in paramserver/ssd_store.hpp): a Put commits by its own files, each
// header naming its place in the Put and the commit the Put follows, so a Put costs one fdatasync
// a file. Recovery replays, after the manifest, the chain of whole Puts ending at the newest one.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "base/status_macros.hpp"
#include "paramserver/ssd_store.hpp"

namespace troupe::paramserver {

namespace fs = std::filesystem;

Status SsdStore::ReplayJournal(uint64_t base, uint64_t* max_seq) {
  Journal journal;
  RETURN_IF_ERROR(ReadJournal(base + 1, &journal, max_seq));
  std::vector<uint64_t> lasts;
  RETURN_IF_ERROR(JournalChain(journal, base, &lasts));
  commit_point_ = base;
  for (uint64_t last : lasts) {
    const ssd::FileCommit commit = journal.at(last).commit;
    std::vector<Written> put;
    for (uint64_t seq = last - commit.files + 1; seq <= last; ++seq) {
      JournalFile& file = journal.at(seq);
      put.push_back({seq, std::move(file.keys), file.block_rows});
    }
    Install(put);
    tag_ = commit.tag;
    commit_point_ = last;
    journal_files_ += commit.files;
  }
  return Status::Ok();
}

Status SsdStore::ReadJournal(uint64_t first, Journal* journal, uint64_t* max_seq) {
  *max_seq = 0;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_, error)) {
    uint64_t seq = 0;
    if (!ssd::ParseFileName(entry.path().filename().string(), &seq)) continue;
    *max_seq = std::max(*max_seq, seq);
    if (seq < first) continue;
    const uint64_t bytes = fs::file_size(entry.path(), error);
    if (error) return Status::IoError(entry.path().string() + ": size: " + error.message());
    if (bytes == 0) continue;  // pre-created, never written
    Status status = read_buffer_.Read(entry.path().string(), seq, bytes, options_.layout.floats());
    recovery_bytes_ += bytes;
    // Short or failing a checksum: a write torn by a crash, or one that failed. Left out here;
    // JournalChain says whether an acknowledged Put needed it.
    if (status.code() == Status::Code::kCorrupt) continue;
    if (!status.ok()) return status;
    JournalFile& file = (*journal)[seq];
    file.commit = read_buffer_.commit();
    file.block_rows = read_buffer_.shape().block_rows;
    file.keys.resize(read_buffer_.count());
    for (uint64_t slot = 0; slot < read_buffer_.count(); ++slot) {
      file.keys[slot] = read_buffer_.key(slot);
    }
  }
  if (error) return Status::IoError(dir_ + ": list directory: " + error.message());
  return Status::Ok();
}

bool SsdStore::WholePut(const Journal& journal, uint64_t last) {
  const auto it = journal.find(last);
  if (it == journal.end()) return false;
  const ssd::FileCommit& c = it->second.commit;
  if (c.files == 0 || c.index != c.files || last < c.files) return false;
  const uint64_t first = last - c.files + 1;
  if (c.prev >= first) return false;
  for (uint64_t seq = first; seq < last; ++seq) {
    const auto member = journal.find(seq);
    if (member == journal.end()) return false;
    const ssd::FileCommit& m = member->second.commit;
    if (m.tag != c.tag || m.prev != c.prev || m.files != c.files || m.index != seq - first + 1) {
      return false;
    }
  }
  return true;
}

Status SsdStore::JournalChain(const Journal& journal, uint64_t base,
                              std::vector<uint64_t>* lasts) const {
  lasts->clear();
  // The newest whole Put ends the chain: the last one acknowledged, or one after it that was
  // durable but not acknowledged (crashed before returning, or failed and not removed).
  uint64_t last = 0;
  for (auto it = journal.rbegin(); it != journal.rend() && last == 0; ++it) {
    if (WholePut(journal, it->first)) last = it->first;
  }
  while (last != 0) {
    lasts->push_back(last);
    const uint64_t prev = journal.at(last).commit.prev;
    if (prev == base) break;
    if (prev < base || !WholePut(journal, prev)) {
      return Status::Corrupt(FilePath(prev) +
                             ": missing, torn or corrupt, but the journal's later write " +
                             FilePath(last) + " follows it (an acknowledged write is lost)");
    }
    last = prev;
  }
  std::reverse(lasts->begin(), lasts->end());
  return Status::Ok();
}

Status SsdStore::EnsureSpares(size_t n) {
  if (!options_.sync || next_seq_ + n <= spares_until_) return Status::Ok();
  const uint64_t until = next_seq_ + std::max<uint64_t>(n, options_.spare_files);
  for (uint64_t seq = std::max(next_seq_, spares_until_); seq < until; ++seq) {
    const std::string path = FilePath(seq);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return ssd::ErrnoStatus("create", path);
    ::close(fd);
  }
  Status status = ssd::SyncDirectory(dir_);
  if (status.ok()) spares_until_ = until;
  return status;
}

}  // namespace troupe::paramserver
