#include "paramserver/ssd_crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace troupe::paramserver::ssd {
namespace {

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

}  // namespace

uint32_t Crc32c(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  if (kHaveSse42 && n >= 4096) return Combine(crc, Crc32cHardware3(p, n), n);
  if (kHaveSse42) return ~Crc32cHardware(~crc, p, n);
#endif
  return ~Crc32cSoftware(~crc, p, n);
}

}  // namespace troupe::paramserver::ssd
