// CRC32C (Castagnoli), the checksum of every SSD-PS file and manifest (paramserver/ssd_file.hpp):
// the SSE4.2 crc32 instruction where the CPU has it (three interleaved lanes for long buffers),
// slice-by-8 tables otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

namespace troupe::paramserver::ssd {

// CRC32C of data, continuing from crc (0 to start): Crc32c(b, n, Crc32c(a, m)) == CRC of a then b.
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);

}  // namespace troupe::paramserver::ssd
