// Checks the `troupe report` tests share: a figure is a real PNG of sensible size, the PNGs of a
// report folder, report.html embeds a figure (base64 data URI), and counting occurrences.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {

inline std::string Base64(const std::string& bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<uint8_t>(bytes[i + 2]);
    for (size_t k = 0; k < 4; ++k) {
      out += i + k <= bytes.size() ? kDigits[(chunk >> (18 - 6 * k)) & 63] : '=';
    }
  }
  return out;
}

inline uint32_t BigEndian32(const std::string& bytes, size_t at) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = value << 8 | static_cast<uint8_t>(bytes[at + i]);
  return value;
}

// A PNG of sensible size: the signature, an IHDR chunk first, width and height in range.
inline void ExpectGoodPng(const std::string& path) {
  SCOPED_TRACE(path);
  const std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 10u * 1024) << "a near-empty figure";
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  const uint32_t width = BigEndian32(bytes, 16), height = BigEndian32(bytes, 20);
  EXPECT_GE(width, 600u);
  EXPECT_LE(width, 3000u);
  EXPECT_GE(height, 300u);
  EXPECT_LE(height, 3000u);
}

// Whether report.html embeds the PNG at `path` as a data URI.
inline bool Embeds(const std::string& html, const std::string& path) {
  return html.find("base64," + Base64(ReadFile(path)) + "\"") != std::string::npos;
}

inline std::vector<std::string> Pngs(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".png") names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

}  // namespace troupe::testing
