#include "paramserver/ssd_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "base/status_macros.hpp"

namespace troupe::paramserver::ssd {
namespace {

static_assert(std::endian::native == std::endian::little, "SSD-PS files are little-endian");

constexpr uint64_t kFileMagic = 0x3146445353505254ULL;  // "TRPSSDF1"
constexpr uint32_t kFileVersion = 2;                    // 2: rows in checked blocks
constexpr size_t kHeaderCrcOffset = 60;
constexpr size_t kBlockCrcBytes = 4;

template <typename T>
void Store(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

std::array<unsigned char, kFileHeaderBytes> EncodeHeader(const FileShape& shape, uint32_t keys_crc,
                                                         const FileCommit& commit) {
  std::array<unsigned char, kFileHeaderBytes> h{};
  Store(h.data(), kFileMagic);
  Store(h.data() + 8, kFileVersion);
  Store(h.data() + 12, static_cast<uint32_t>(shape.floats));
  Store(h.data() + 16, shape.seq);
  Store(h.data() + 24, shape.count);
  Store(h.data() + 32, keys_crc);
  Store(h.data() + 36, shape.block_rows);
  Store(h.data() + 40, commit.tag);
  Store(h.data() + 48, commit.prev);
  Store(h.data() + 56, commit.index);
  Store(h.data() + 58, commit.files);
  Store(h.data() + kHeaderCrcOffset, Crc32c(h.data(), kHeaderCrcOffset));
  return h;
}

// Checks a header against what the manifest says the file is; fills *shape, *keys_crc and
// *commit (if not null).
Status CheckHeader(const unsigned char* h, const std::string& path, uint64_t seq, uint64_t bytes,
                   int32_t floats, FileShape* shape, uint32_t* keys_crc,
                   FileCommit* commit = nullptr) {
  if (LoadBytes<uint32_t>(h + kHeaderCrcOffset) != Crc32c(h, kHeaderCrcOffset)) {
    return Status::Corrupt(path + ": header checksum mismatch");
  }
  if (LoadBytes<uint64_t>(h) != kFileMagic || LoadBytes<uint32_t>(h + 8) != kFileVersion) {
    return Status::Corrupt(path + ": not an SSD-PS parameter file of version " +
                           std::to_string(kFileVersion) + " (magic or version)");
  }
  shape->seq = LoadBytes<uint64_t>(h + 16);
  shape->count = LoadBytes<uint64_t>(h + 24);
  shape->floats = static_cast<int32_t>(LoadBytes<uint32_t>(h + 12));
  shape->block_rows = LoadBytes<uint32_t>(h + 36);
  *keys_crc = LoadBytes<uint32_t>(h + 32);
  if (commit != nullptr) {
    *commit = {LoadBytes<uint64_t>(h + 40), LoadBytes<uint64_t>(h + 48),
               LoadBytes<uint16_t>(h + 56), LoadBytes<uint16_t>(h + 58)};
  }
  if (shape->seq != seq || shape->floats != floats || shape->block_rows == 0 ||
      shape->bytes() != bytes) {
    return Status::Corrupt(path + ": header disagrees with the manifest (seq, floats or size)");
  }
  return Status::Ok();
}

// The CRC a block's records start from: its file and its place in it.
uint32_t BlockSeed(uint64_t seq, uint64_t block) {
  const uint64_t where[2] = {seq, block};
  return Crc32c(where, sizeof(where));
}

}  // namespace

uint64_t FileShape::BlockOffset(uint64_t b) const {
  const uint64_t full = std::min(b, blocks());
  const uint64_t rows = std::min(count, full * block_rows);
  return kFileHeaderBytes + count * sizeof(Key) + rows * record_bytes() + full * kBlockCrcBytes;
}

uint64_t FileShape::BlockBytes(uint64_t b) const { return BlockOffset(b + 1) - BlockOffset(b); }

uint32_t BlockRows(int32_t floats, uint64_t block_bytes) {
  const uint64_t record = sizeof(Key) + static_cast<uint64_t>(floats) * sizeof(float);
  const uint64_t rows = block_bytes > kBlockCrcBytes ? (block_bytes - kBlockCrcBytes) / record : 0;
  return static_cast<uint32_t>(std::clamp<uint64_t>(rows, 1, UINT32_MAX));
}

uint64_t ParamFileBytes(uint64_t count, int32_t floats, uint32_t block_rows) {
  return FileShape{0, count, floats, block_rows}.bytes();
}

std::string FileName(uint64_t seq) {
  char name[32];
  std::snprintf(name, sizeof(name), "%020" PRIu64 ".ssd", seq);
  return name;
}

bool ParseFileName(std::string_view name, uint64_t* seq) {
  if (name.size() != 24 || name.substr(20) != ".ssd") return false;
  uint64_t v = 0;
  for (char c : name.substr(0, 20)) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *seq = v;
  return true;
}

Status WriteParamFile(const std::string& path, uint64_t seq, std::span<const Key> keys,
                      std::span<const float> values, int32_t floats, uint32_t block_rows, bool sync,
                      SsdWriteFault* fault, const FileCommit& commit) {
  if (values.size() != keys.size() * static_cast<size_t>(floats) || block_rows == 0) {
    return Status::InvalidInput(path + ": rows do not match keys");
  }
  const FileShape shape{seq, keys.size(), floats, block_rows};
  const size_t row_bytes = static_cast<size_t>(floats) * sizeof(float);
  std::vector<unsigned char> file(shape.bytes());
  std::memcpy(file.data() + kFileHeaderBytes, keys.data(), keys.size_bytes());
  for (uint64_t b = 0; b < shape.blocks(); ++b) {
    unsigned char* const block = file.data() + shape.BlockOffset(b);
    unsigned char* p = block;
    const uint64_t end = std::min<uint64_t>(keys.size(), (b + 1) * block_rows);
    for (uint64_t slot = b * block_rows; slot < end; ++slot) {
      Store(p, keys[slot]);
      std::memcpy(p + sizeof(Key), values.data() + slot * floats, row_bytes);
      p += shape.record_bytes();
    }
    Store(p, Crc32c(block, static_cast<size_t>(p - block), BlockSeed(seq, b)));
  }
  const auto header = EncodeHeader(shape, Crc32c(keys.data(), keys.size_bytes()), commit);
  std::memcpy(file.data(), header.data(), header.size());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create", path);
  if (const int injected = fault != nullptr ? fault->NextWrite() : 0; injected != 0) {
    Status status = WriteHalfThenFail(fd, file.data(), file.size(), injected, path);
    ::close(fd);
    return status;
  }
  Status status = WriteAll(fd, file.data(), file.size(), path);
  if (status.ok() && sync && ::fdatasync(fd) != 0) status = ErrnoStatus("fdatasync", path);
  if (::close(fd) != 0 && status.ok()) status = ErrnoStatus("close", path);
  return status;
}

Status OpenParamFile(const std::string& path, uint64_t bytes, int* fd) {
  *fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (*fd < 0) return ErrnoStatus("open", path);
  struct stat st;
  if (::fstat(*fd, &st) != 0) {
    Status status = ErrnoStatus("fstat", path);
    ::close(*fd);
    return status;
  }
  if (static_cast<uint64_t>(st.st_size) != bytes) {
    ::close(*fd);
    return Status::Corrupt(path + ": size " + std::to_string(st.st_size) +
                           " bytes, manifest says " + std::to_string(bytes));
  }
  return Status::Ok();
}

Status ParamFile::Read(const std::string& path, uint64_t seq, uint64_t bytes, int32_t floats) {
  shape_ = FileShape{};
  commit_ = FileCommit{};
  blocks_ = 0;
  bytes_ = 0;
  if (bytes < kFileHeaderBytes) return Status::Corrupt(path + ": manifest size too small");
  int fd = -1;
  RETURN_IF_ERROR(OpenParamFile(path, bytes, &fd));
  buffer_.resize(bytes);
  Status status = ReadAllAt(fd, buffer_.data(), bytes, 0, path);
  ::close(fd);
  if (!status.ok()) return status;
  bytes_ = bytes;
  FileShape shape;
  uint32_t keys_crc = 0;
  RETURN_IF_ERROR(
      CheckHeader(buffer_.data(), path, seq, bytes, floats, &shape, &keys_crc, &commit_));
  if (Crc32c(buffer_.data() + kFileHeaderBytes, shape.count * sizeof(Key)) != keys_crc) {
    return Status::Corrupt(path + ": keys checksum mismatch");
  }
  shape_ = shape;
  base_ = shape.BlockOffset(0);
  first_block_ = 0;
  blocks_ = shape.blocks();
  status = CheckBlocks(path);
  for (uint64_t slot = 0; status.ok() && slot < shape.count; ++slot) {
    if (key(slot) != LoadBytes<Key>(buffer_.data() + kFileHeaderBytes + slot * sizeof(Key))) {
      status = Status::Corrupt(path + ": a block's key disagrees with the key list");
    }
  }
  if (!status.ok()) blocks_ = 0;
  return status;
}

Status ParamFile::ReadBlocks(int fd, const std::string& path, const FileShape& shape,
                             uint64_t first, uint64_t n) {
  shape_ = shape;
  blocks_ = 0;
  bytes_ = 0;
  if (n == 0 || first + n > shape.blocks()) return Status::InvalidInput(path + ": no such block");
  const uint64_t offset = shape.BlockOffset(first);
  bytes_ = shape.BlockOffset(first + n) - offset;
  buffer_.resize(bytes_);
  RETURN_IF_ERROR(ReadAllAt(fd, buffer_.data(), bytes_, offset, path));
  base_ = 0;
  first_block_ = first;
  blocks_ = n;
  Status status = CheckBlocks(path);
  if (!status.ok()) blocks_ = 0;
  return status;
}

Status ParamFile::CheckBlocks(const std::string& path) const {
  for (uint64_t b = first_block_; b < first_block_ + blocks_; ++b) {
    const unsigned char* block =
        buffer_.data() + base_ + (shape_.BlockOffset(b) - shape_.BlockOffset(first_block_));
    const size_t records = shape_.BlockBytes(b) - kBlockCrcBytes;
    if (Crc32c(block, records, BlockSeed(shape_.seq, b)) != LoadBytes<uint32_t>(block + records)) {
      return Status::Corrupt(path + ": checksum mismatch in block " + std::to_string(b));
    }
  }
  return Status::Ok();
}

size_t ParamFile::RecordAt(uint64_t slot) const {
  const uint64_t b = shape_.BlockOf(slot);
  return base_ + (shape_.BlockOffset(b) - shape_.BlockOffset(first_block_)) +
         (slot - b * shape_.block_rows) * shape_.record_bytes();
}

Key ParamFile::key(uint64_t slot) const { return LoadBytes<Key>(buffer_.data() + RecordAt(slot)); }

void ParamFile::CopyRow(uint64_t slot, float* out) const {
  std::memcpy(out, buffer_.data() + RecordAt(slot) + sizeof(Key),
              static_cast<size_t>(shape_.floats) * sizeof(float));
}

Status ReadParamKeys(const std::string& path, uint64_t seq, uint64_t bytes, int32_t floats,
                     std::vector<Key>* keys, uint32_t* block_rows) {
  keys->clear();
  if (bytes < kFileHeaderBytes) return Status::Corrupt(path + ": manifest size too small");
  int fd = -1;
  RETURN_IF_ERROR(OpenParamFile(path, bytes, &fd));
  unsigned char header[kFileHeaderBytes];
  Status status = ReadAllAt(fd, header, sizeof(header), 0, path);
  FileShape shape;
  uint32_t keys_crc = 0;
  if (status.ok()) status = CheckHeader(header, path, seq, bytes, floats, &shape, &keys_crc);
  if (status.ok()) {
    keys->resize(shape.count);
    status = ReadAllAt(fd, keys->data(), shape.count * sizeof(Key), kFileHeaderBytes, path);
  }
  ::close(fd);
  if (status.ok() && Crc32c(keys->data(), shape.count * sizeof(Key)) != keys_crc) {
    status = Status::Corrupt(path + ": keys checksum mismatch");
  }
  if (!status.ok()) keys->clear();
  *block_rows = shape.block_rows;
  return status;
}

Status WriteAll(int fd, const void* data, size_t n, const std::string& path) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return ErrnoStatus("write", path);
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

Status WriteHalfThenFail(int fd, const void* data, size_t n, int error, const std::string& path) {
  RETURN_IF_ERROR(WriteAll(fd, data, n / 2, path));
  errno = error;
  return ErrnoStatus("write", path);
}

Status ReadAllAt(int fd, void* data, size_t n, uint64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ErrnoStatus("read", path);
    if (r == 0) return Status::Corrupt(path + ": file shorter than expected");
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return Status::Ok();
}

Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open directory", dir);
  Status status;
  if (::fsync(fd) != 0) status = ErrnoStatus("fsync directory", dir);
  ::close(fd);
  return status;
}

Status ErrnoStatus(const std::string& what, const std::string& path) {
  return Status::IoError(path + ": " + what + ": " + std::strerror(errno));
}

}  // namespace troupe::paramserver::ssd
