#include "paramserver/ssd_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace troupe::paramserver::ssd {
namespace {

static_assert(std::endian::native == std::endian::little, "SSD-PS files are little-endian");

constexpr uint64_t kFileMagic = 0x3146445353505254ULL;  // "TRPSSDF1"
constexpr uint32_t kFileVersion = 1;
constexpr size_t kHeaderCrcOffset = 60;

// Slice-by-8 tables of the reflected Castagnoli polynomial.
constexpr std::array<std::array<uint32_t, 256>, 8> MakeTables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0u);
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}
constexpr auto kTables = MakeTables();

uint32_t Crc32cSoftware(uint32_t c, const unsigned char* p, size_t n) {
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    v ^= c;
    c = kTables[7][v & 0xFF] ^ kTables[6][(v >> 8) & 0xFF] ^ kTables[5][(v >> 16) & 0xFF] ^
        kTables[4][(v >> 24) & 0xFF] ^ kTables[3][(v >> 32) & 0xFF] ^ kTables[2][(v >> 40) & 0xFF] ^
        kTables[1][(v >> 48) & 0xFF] ^ kTables[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFF];
  return c;
}

// a(x) * b(x) modulo the polynomial, reflected (zlib's multmodp).
uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31, p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? (b >> 1) ^ 0x82F63B78u : b >> 1;
  }
  return p;
}

// x^(8 * n) modulo the polynomial: what a CRC is multiplied by to skip n zero bytes.
uint32_t ShiftFactor(uint64_t n) {
  static const std::array<uint32_t, 64> x2n = [] {
    std::array<uint32_t, 64> t{};
    uint32_t p = 1u << 30;  // x^1
    for (auto& v : t) {
      v = p;
      p = MultModP(p, p);
    }
    return t;
  }();
  uint32_t p = 1u << 31;  // x^0
  for (unsigned k = 3; n != 0; n >>= 1, ++k) {
    if (n & 1) p = MultModP(x2n[k & 63], p);
  }
  return p;
}

// CRC of a then b, from CRC(a), CRC(b) and b's length (zlib's crc32_combine).
uint32_t Combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
  return MultModP(ShiftFactor(len_b), crc_a) ^ crc_b;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t Crc32cHardware(uint32_t c, const unsigned char* p,
                                                          size_t n) {
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c64 = _mm_crc32_u64(c64, v);
    p += 8;
    n -= 8;
  }
  c = static_cast<uint32_t>(c64);
  while (n-- > 0) c = _mm_crc32_u8(c, *p++);
  return c;
}

// The CRC (finished, from scratch) of n >= 3 * 8 bytes in three interleaved lanes, which hides the
// crc32 instruction's latency (about 3x one lane), then combined.
__attribute__((target("sse4.2"))) uint32_t Crc32cHardware3(const unsigned char* p, size_t n) {
  const size_t lane = (n / 3) & ~size_t{7};
  uint64_t a = 0xFFFFFFFFu, b = 0xFFFFFFFFu, c = 0xFFFFFFFFu;
  for (size_t i = 0; i < lane; i += 8) {
    uint64_t va, vb, vc;
    std::memcpy(&va, p + i, 8);
    std::memcpy(&vb, p + lane + i, 8);
    std::memcpy(&vc, p + 2 * lane + i, 8);
    a = _mm_crc32_u64(a, va);
    b = _mm_crc32_u64(b, vb);
    c = _mm_crc32_u64(c, vc);
  }
  const uint32_t crc_c = ~Crc32cHardware(static_cast<uint32_t>(c), p + 3 * lane, n - 3 * lane);
  const uint32_t crc_ab = Combine(~static_cast<uint32_t>(a), ~static_cast<uint32_t>(b), lane);
  return Combine(crc_ab, crc_c, n - 2 * lane);
}
const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

template <typename T>
T Load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void Store(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

std::array<unsigned char, kFileHeaderBytes> EncodeHeader(uint64_t seq, uint64_t count,
                                                         int32_t floats, uint32_t keys_crc,
                                                         uint32_t body_crc) {
  std::array<unsigned char, kFileHeaderBytes> h{};
  Store(h.data(), kFileMagic);
  Store(h.data() + 8, kFileVersion);
  Store(h.data() + 12, static_cast<uint32_t>(floats));
  Store(h.data() + 16, seq);
  Store(h.data() + 24, count);
  Store(h.data() + 32, keys_crc);
  Store(h.data() + 36, body_crc);
  Store(h.data() + kHeaderCrcOffset, Crc32c(h.data(), kHeaderCrcOffset));
  return h;
}

struct Header {
  uint64_t count = 0;
  uint32_t keys_crc = 0;
  uint32_t body_crc = 0;
};

// Checks a header against what the manifest says the file is; fills *out.
Status CheckHeader(const unsigned char* h, const std::string& path, uint64_t seq, uint64_t bytes,
                   int32_t floats, Header* out) {
  if (Load<uint32_t>(h + kHeaderCrcOffset) != Crc32c(h, kHeaderCrcOffset)) {
    return Status::Corrupt(path + ": header checksum mismatch");
  }
  if (Load<uint64_t>(h) != kFileMagic || Load<uint32_t>(h + 8) != kFileVersion) {
    return Status::Corrupt(path + ": not an SSD-PS parameter file (magic or version)");
  }
  out->count = Load<uint64_t>(h + 24);
  out->keys_crc = Load<uint32_t>(h + 32);
  out->body_crc = Load<uint32_t>(h + 36);
  if (Load<uint64_t>(h + 16) != seq || Load<uint32_t>(h + 12) != static_cast<uint32_t>(floats) ||
      ParamFileBytes(out->count, floats) != bytes) {
    return Status::Corrupt(path + ": header disagrees with the manifest (seq, floats or size)");
  }
  return Status::Ok();
}

// Opens path read-only and checks that it is exactly `bytes` long.
Status OpenSized(const std::string& path, uint64_t bytes, int* fd) {
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

}  // namespace

uint32_t Crc32c(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  if (kHaveSse42 && n >= 4096) return Combine(crc, Crc32cHardware3(p, n), n);
  if (kHaveSse42) return ~Crc32cHardware(~crc, p, n);
#endif
  return ~Crc32cSoftware(~crc, p, n);
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
                      std::span<const float> values, int32_t floats, bool sync,
                      SsdWriteFault* fault) {
  if (values.size() != keys.size() * static_cast<size_t>(floats)) {
    return Status::InvalidInput(path + ": rows do not match keys");
  }
  const size_t key_bytes = keys.size_bytes();
  const uint32_t keys_crc = Crc32c(keys.data(), key_bytes);
  const uint32_t body_crc = Crc32c(values.data(), values.size_bytes(), keys_crc);
  const auto header = EncodeHeader(seq, keys.size(), floats, keys_crc, body_crc);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("create", path);
  if (const int injected = fault != nullptr ? fault->NextWrite() : 0; injected != 0) {
    Status status = WriteHalfThenFail(fd, header.data(), header.size(), injected, path);
    ::close(fd);
    return status;
  }
  Status status = WriteAll(fd, header.data(), header.size(), path);
  if (status.ok()) status = WriteAll(fd, keys.data(), key_bytes, path);
  if (status.ok()) status = WriteAll(fd, values.data(), values.size_bytes(), path);
  if (status.ok() && sync && ::fdatasync(fd) != 0) status = ErrnoStatus("fdatasync", path);
  if (::close(fd) != 0 && status.ok()) status = ErrnoStatus("close", path);
  return status;
}

Status ParamFile::Read(const std::string& path, uint64_t seq, uint64_t bytes, int32_t floats) {
  count_ = 0;
  floats_ = floats;
  if (bytes < kFileHeaderBytes) return Status::Corrupt(path + ": manifest size too small");
  int fd = -1;
  Status status = OpenSized(path, bytes, &fd);
  if (!status.ok()) return status;
  buffer_.resize(bytes);
  status = ReadAllAt(fd, buffer_.data(), bytes, 0, path);
  ::close(fd);
  if (!status.ok()) return status;
  Header h;
  status = CheckHeader(buffer_.data(), path, seq, bytes, floats, &h);
  if (!status.ok()) return status;
  if (Crc32c(buffer_.data() + kFileHeaderBytes, bytes - kFileHeaderBytes) != h.body_crc) {
    return Status::Corrupt(path + ": body checksum mismatch");
  }
  count_ = h.count;
  return Status::Ok();
}

Key ParamFile::key(uint64_t i) const {
  return Load<Key>(buffer_.data() + kFileHeaderBytes + i * sizeof(Key));
}

void ParamFile::CopyRow(uint64_t i, float* out) const {
  const size_t row_bytes = static_cast<size_t>(floats_) * sizeof(float);
  std::memcpy(out, buffer_.data() + kFileHeaderBytes + count_ * sizeof(Key) + i * row_bytes,
              row_bytes);
}

Status ReadParamKeys(const std::string& path, uint64_t seq, uint64_t bytes, int32_t floats,
                     std::vector<Key>* keys) {
  keys->clear();
  if (bytes < kFileHeaderBytes) return Status::Corrupt(path + ": manifest size too small");
  int fd = -1;
  Status status = OpenSized(path, bytes, &fd);
  if (!status.ok()) return status;
  unsigned char header[kFileHeaderBytes];
  status = ReadAllAt(fd, header, sizeof(header), 0, path);
  Header h;
  if (status.ok()) status = CheckHeader(header, path, seq, bytes, floats, &h);
  if (status.ok()) {
    keys->resize(h.count);
    status = ReadAllAt(fd, keys->data(), h.count * sizeof(Key), kFileHeaderBytes, path);
  }
  ::close(fd);
  if (status.ok() && Crc32c(keys->data(), h.count * sizeof(Key)) != h.keys_crc) {
    status = Status::Corrupt(path + ": keys checksum mismatch");
  }
  if (!status.ok()) keys->clear();
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
  Status status = WriteAll(fd, data, n / 2, path);
  if (!status.ok()) return status;
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
