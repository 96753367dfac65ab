// SSD-PS parameter files: the on-disk unit of the SSD tier (paramserver/ssd_store.hpp).
//
// A parameter file holds `count` rows, each a key and `floats` floats, written once and never
// updated in place. Its rows are grouped in blocks of `block_rows` rows, each block small (about
// 4 KiB, one SSD page) and checked on its own, so a reader fetches only the blocks holding the rows
// it wants, never the whole file. Layout (native little-endian):
//   header (kFileHeaderBytes = 64): magic "TRPSSDF1", u32 version (2), u32 floats, u64 seq,
//     u64 count, u32 keys_crc (CRC32C of the keys), u32 block_rows, then the file's FileCommit
//     (u64 tag, u64 prev, u16 index, u16 files; zero in a file a manifest commits), u32
//     header_crc (CRC32C of the header's first 60 bytes) at byte 60;
//   keys: count u64 (what opening a store reads to rebuild its index);
//   blocks: ceil(count / block_rows) of them; block b holds rows [b * block_rows, ...) as records
//     (u64 key, floats f32), then a u32 CRC32C of those records seeded with (seq, b), so a block
//     read from the wrong file or offset fails its check like a corrupt one.
// The file is named by its sequence number (FileName); a higher sequence number is a later write.
// Every checksum is checked before a value is used: a corrupt block is an error naming the file,
// never parameters. Opening a store reads only headers and keys (ReadParamKeys).
//
// Also here: small POSIX helpers that turn errno into a Status naming the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "paramserver/ssd_crc32c.hpp"
#include "paramserver/ssd_fault.hpp"
#include "paramserver/types.hpp"

namespace troupe::paramserver::ssd {

inline constexpr size_t kFileHeaderBytes = 64;
inline constexpr uint64_t kDefaultBlockBytes = 4096;  // one SSD page

// How a file written by a journal-committed Put (paramserver/ssd_store.hpp) ties itself to its
// Put and to the commit before it. All zero in files a manifest commits (compaction, big Puts).
struct FileCommit {
  uint64_t tag = 0;    // the owner's tag the Put commits
  uint64_t prev = 0;   // the commit point the Put follows: the last file of the commit before it
  uint16_t index = 0;  // this file's place in its Put, 1..files
  uint16_t files = 0;  // files the Put wrote; 0: not a journal file
};

// The shape of a file: everything its size and block offsets follow from.
struct FileShape {
  uint64_t seq = 0;
  uint64_t count = 0;       // rows
  int32_t floats = 0;       // floats per row
  uint32_t block_rows = 1;  // rows per block (the last block may hold fewer)

  uint64_t record_bytes() const { return sizeof(Key) + static_cast<uint64_t>(floats) * 4; }
  uint64_t blocks() const { return (count + block_rows - 1) / block_rows; }
  uint64_t BlockOf(uint64_t slot) const { return slot / block_rows; }
  uint64_t BlockOffset(uint64_t b) const;  // where block b starts in the file
  uint64_t BlockBytes(uint64_t b) const;   // its records and CRC
  uint64_t bytes() const { return BlockOffset(blocks()); }
};

// Rows of `floats` floats a block of at most block_bytes holds (at least 1).
uint32_t BlockRows(int32_t floats, uint64_t block_bytes);

// Bytes of a file with `count` rows of `floats` floats (blocks of block_rows rows; by default
// the rows of a kDefaultBlockBytes block).
uint64_t ParamFileBytes(uint64_t count, int32_t floats, uint32_t block_rows);
inline uint64_t ParamFileBytes(uint64_t count, int32_t floats) {
  return ParamFileBytes(count, floats, BlockRows(floats, kDefaultBlockBytes));
}

// "00000000000000000042.ssd" for seq 42; ParseFileName is its inverse (false for other names).
std::string FileName(uint64_t seq);
bool ParseFileName(std::string_view name, uint64_t* seq);

// Writes keys (rows: keys.size() * floats values, row i at i * floats) as a new file at path, in
// blocks of block_rows, and, if sync, fdatasyncs it (not its directory: the manifest's rename
// or pre-creating it does that). Truncates a leftover file. With `fault` set and failing
// (ssd_fault.hpp), half the file is written and the injected errno returned as write(2)'s.
// `commit` goes into the header.
Status WriteParamFile(const std::string& path, uint64_t seq, std::span<const Key> keys,
                      std::span<const float> values, int32_t floats, uint32_t block_rows, bool sync,
                      SsdWriteFault* fault = nullptr, const FileCommit& commit = {});

// Opens path read-only (*fd; the caller closes it) and checks it is exactly `bytes` long.
Status OpenParamFile(const std::string& path, uint64_t bytes, int* fd);

// Rows of one file read into memory and checked: the whole file (Read) or some of its blocks
// (ReadBlocks). key(slot) and CopyRow(slot) address rows by their slot in the file; only slots
// in the blocks read are valid (Holds).
class ParamFile {
 public:
  // Reads all of path (expected: seq, floats and exactly `bytes` bytes, as the manifest says),
  // reusing this object's buffer, and checks its size, header, keys and every block.
  Status Read(const std::string& path, uint64_t seq, uint64_t bytes, int32_t floats);
  // Reads blocks [first, first + n) of the open file fd of that shape, one pread, and checks each.
  Status ReadBlocks(int fd, const std::string& path, const FileShape& shape, uint64_t first,
                    uint64_t n);

  const FileShape& shape() const { return shape_; }
  const FileCommit& commit() const { return commit_; }  // from the header the last call checked
  uint64_t count() const { return shape_.count; }
  uint64_t bytes() const { return bytes_; }  // bytes the last call read
  bool Holds(uint64_t slot) const {
    const uint64_t b = shape_.BlockOf(slot);
    return slot < shape_.count && b >= first_block_ && b < first_block_ + blocks_;
  }
  Key key(uint64_t slot) const;                   // the key stored with the row (requires Holds)
  void CopyRow(uint64_t slot, float* out) const;  // the row's floats (as read) into out

 private:
  Status CheckBlocks(const std::string& path) const;
  size_t RecordAt(uint64_t slot) const;  // offset of slot's record in buffer_

  std::vector<unsigned char> buffer_;
  FileShape shape_;
  FileCommit commit_;
  size_t base_ = 0;  // offset in buffer_ of block first_block_
  uint64_t first_block_ = 0;
  uint64_t blocks_ = 0;
  uint64_t bytes_ = 0;
};

// Reads only the header and keys of path and checks them (header_crc, keys_crc, the expected seq,
// floats and file size). Used when a store is opened to rebuild its key -> (file, slot) map.
Status ReadParamKeys(const std::string& path, uint64_t seq, uint64_t bytes, int32_t floats,
                     std::vector<Key>* keys, uint32_t* block_rows);

// POSIX helpers: errors name the path and carry strerror(errno).
Status WriteAll(int fd, const void* data, size_t n, const std::string& path);
// Writes the first half of data, then fails as write(2) with errno `error` (an injected fault).
Status WriteHalfThenFail(int fd, const void* data, size_t n, int error, const std::string& path);
Status ReadAllAt(int fd, void* data, size_t n, uint64_t offset, const std::string& path);
Status SyncDirectory(const std::string& dir);
Status ErrnoStatus(const std::string& what, const std::string& path);

// A T read from the bytes at p as they are stored (the files are little-endian).
template <typename T>
T LoadBytes(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace troupe::paramserver::ssd
