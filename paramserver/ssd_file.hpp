// SSD-PS parameter files: the on-disk unit of the SSD tier (paramserver/ssd_store.hpp).
//
// A parameter file holds `count` rows, each a key and `floats` floats, written once and never
// updated in place. Layout (native little-endian):
//   header (kFileHeaderBytes = 64): magic "TRPSSDF1", u32 version, u32 floats, u64 seq,
//     u64 count, u32 keys_crc (CRC32C of the keys), u32 body_crc (CRC32C of keys then rows),
//     zero padding, u32 header_crc (CRC32C of the header's first 60 bytes) at byte 60;
//   keys: count u64;  rows: count * floats f32.
// The file is named by its sequence number (FileName); a higher sequence number is a later write.
// Reads are whole files (the SSD-PS I/O unit) and check every checksum before a single value is
// used: a corrupt file is an error naming it, never parameters. Opening a store only reads the
// header and keys (ReadParamKeys), checked by header_crc and keys_crc.
//
// Also here: CRC32C (Castagnoli; SSE4.2 instruction where the CPU has it, tables otherwise) and
// small POSIX helpers that turn errno into a Status naming the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "paramserver/ssd_fault.hpp"
#include "paramserver/types.hpp"

namespace troupe::paramserver::ssd {

// CRC32C of data, continuing from crc (0 to start): Crc32c(b, n, Crc32c(a, m)) == CRC of a then b.
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);

inline constexpr size_t kFileHeaderBytes = 64;

// Bytes of a file with `count` rows of `floats` floats.
inline uint64_t ParamFileBytes(uint64_t count, int32_t floats) {
  return kFileHeaderBytes + count * (sizeof(Key) + static_cast<uint64_t>(floats) * sizeof(float));
}

// "00000000000000000042.ssd" for seq 42; ParseFileName is its inverse (false for other names).
std::string FileName(uint64_t seq);
bool ParseFileName(std::string_view name, uint64_t* seq);

// Writes keys (rows: keys.size() * floats values, row i at i * floats) as a new file at path and,
// if sync, fdatasyncs it (not its directory: the manifest's rename does that). Truncates a
// leftover file. With `fault` set and failing (ssd_fault.hpp), half the file is written and the
// injected errno returned as write(2)'s.
Status WriteParamFile(const std::string& path, uint64_t seq, std::span<const Key> keys,
                      std::span<const float> values, int32_t floats, bool sync,
                      SsdWriteFault* fault = nullptr);

// A whole file read into memory and checked; key(i) and row(i) index its rows.
class ParamFile {
 public:
  // Reads all of path (expected: seq, floats and exactly `bytes` bytes, as the manifest says)
  // into this object's buffer, reusing its capacity, and checks size, header and body checksum.
  Status Read(const std::string& path, uint64_t seq, uint64_t bytes, int32_t floats);

  uint64_t count() const { return count_; }
  uint64_t bytes() const { return buffer_.size(); }
  Key key(uint64_t i) const;
  void CopyRow(uint64_t i, float* out) const;  // the row's floats (as read) into out

 private:
  std::vector<unsigned char> buffer_;
  uint64_t count_ = 0;
  int32_t floats_ = 0;
};

// Reads only the header and keys of path and checks them (header_crc, keys_crc, the expected seq,
// floats and file size). Used when a store is opened to rebuild its key -> (file, slot) map.
Status ReadParamKeys(const std::string& path, uint64_t seq, uint64_t bytes, int32_t floats,
                     std::vector<Key>* keys);

// POSIX helpers: errors name the path and carry strerror(errno).
Status WriteAll(int fd, const void* data, size_t n, const std::string& path);
// Writes the first half of data, then fails as write(2) with errno `error` (an injected fault).
Status WriteHalfThenFail(int fd, const void* data, size_t n, int error, const std::string& path);
Status ReadAllAt(int fd, void* data, size_t n, uint64_t offset, const std::string& path);
Status SyncDirectory(const std::string& dir);
Status ErrnoStatus(const std::string& what, const std::string& path);

}  // namespace troupe::paramserver::ssd
