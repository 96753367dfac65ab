// Opening the files a user names as input — traces, the config, a Criteo TSV, the model catalogue —
// and reading them whole or line by line. Every input reader opens its file here.
//
// Contract: OpenInputFile opens only a regular file, and never blocks doing so. Anything else is
// one InvalidInput line naming the field and the path ("workload.trace_file: 'x' is a FIFO, not a
// regular file"): a FIFO would block the run forever, a device such as /dev/zero never ends, a
// socket cannot be opened at all. A directory or a missing file is "path: cannot read: <why>".
// LineReader hands out lines of at most kMaxInputLineBytes (1 MiB, '\n' excluded); a longer line
// stops it with InvalidInput "path:line: line longer than 1048576 bytes (1 MiB)": no text input of
// troupe's has one, and reading it whole would hold a runaway file in memory. Header-only: base/
// is the bottom library (base/status.hpp) and paramserver/ links nothing of workload/.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/status.hpp"
#include "base/status_macros.hpp"

namespace troupe {

// The longest line an input file may hold, '\n' excluded (docs/config.md, "Input files").
inline constexpr size_t kMaxInputLineBytes = size_t{1} << 20;

struct InputFileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using InputFile = std::unique_ptr<std::FILE, InputFileCloser>;

inline const char* FileTypeName(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// Opens `path` for reading; `field` names it in the refusal of what is not a regular file
// ("workload.trace_file", "config file").
inline Status OpenInputFile(const std::string& path, std::string_view field, InputFile* out) {
  out->reset();
  auto cannot_read = [&path](int error) {
    return Status::InvalidInput(path + ": cannot read: " + std::strerror(error));
  };
  // O_NONBLOCK: opening a FIFO that has no writer would otherwise block here, before any check.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return cannot_read(errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return cannot_read(error);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    if (S_ISDIR(info.st_mode)) return cannot_read(EISDIR);
    // Appended piece by piece: GCC 12 warns (-Wrestrict) on "'" + std::string here.
    std::string why(field);
    if (!why.empty()) why += ": ";
    why += '\'';
    why += path;
    why += "' is ";
    why += FileTypeName(info.st_mode);
    why += ", not a regular file; troupe reads its inputs from regular files";
    return Status::InvalidInput(std::move(why));
  }
  // Reads of a regular file ignore O_NONBLOCK; cleared all the same, for plain blocking reads.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::FILE* file = ::fdopen(fd, "rb");
  if (file == nullptr) {
    const int error = errno;
    ::close(fd);
    return cannot_read(error);
  }
  out->reset(file);
  return Status::Ok();
}

// Reads a whole input file into *out in one go (a config, a model catalogue: a few kB).
inline Status ReadWholeFile(const std::string& path, std::string_view field, std::string* out) {
  InputFile file;
  RETURN_IF_ERROR(OpenInputFile(path, field, &file));
  out->clear();
  char buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) out->append(buffer, got);
  if (std::ferror(file.get())) {
    return Status::InvalidInput(path + ": cannot read: " + std::strerror(errno));
  }
  return Status::Ok();
}

// Streams the lines of an open file (not owned) without holding it whole.
class LineReader {
 public:
  LineReader(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}

  // The next physical line, without its '\n', as a view valid until the next call; false at the
  // end, or once reading failed or a line was too long (then status() says why).
  bool Next(std::string_view* line) {
    while (status_.ok()) {
      const size_t end = buffer_.find('\n', scanned_);
      if (end != std::string::npos && end - pos_ <= kMaxInputLineBytes) {
        return HandOut(end - pos_, end + 1, line);
      }
      if (buffer_.size() - pos_ > kMaxInputLineBytes) return TooLong();
      scanned_ = buffer_.size();
      if (at_end_) {
        if (pos_ >= buffer_.size()) return false;
        return HandOut(buffer_.size() - pos_, buffer_.size(), line);  // a last line without '\n'
      }
      ReadBlock();
    }
    return false;
  }

  // The number of the line last handed out (1-based).
  int64_t line_number() const { return line_number_; }
  const Status& status() const { return status_; }

 private:
  bool HandOut(size_t length, size_t next, std::string_view* line) {
    *line = std::string_view(buffer_).substr(pos_, length);
    pos_ = next;
    scanned_ = next;
    ++line_number_;
    return true;
  }

  bool TooLong() {
    status_ = Status::InvalidInput(path_ + ":" + std::to_string(line_number_ + 1) +
                                   ": line longer than " + std::to_string(kMaxInputLineBytes) +
                                   " bytes (1 MiB); is this a text file?");
    return false;
  }

  // Keeps only the unfinished line, then appends the next block after it.
  void ReadBlock() {
    buffer_.erase(0, pos_);
    scanned_ -= pos_;
    pos_ = 0;
    char block[1 << 16];
    const size_t got = std::fread(block, 1, sizeof(block), file_);
    buffer_.append(block, got);
    if (got < sizeof(block)) {
      at_end_ = true;
      if (std::ferror(file_)) {
        status_ = Status::InvalidInput(path_ + ": cannot read: " + std::strerror(errno));
      }
    }
  }

  std::FILE* file_;
  std::string path_;
  std::string buffer_;  // buffer_[pos_..] is read but not handed out
  size_t pos_ = 0;
  size_t scanned_ = 0;  // buffer_[pos_..scanned_] holds no '\n'
  int64_t line_number_ = 0;
  bool at_end_ = false;
  Status status_ = Status::Ok();
};

}  // namespace troupe
