// The plain numbers and HOST:PORT addresses troupe reads from flags and configs, parsed strictly:
// decimal digits only (no sign, no base prefix, no trailing junk), within the range asked for.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace troupe {

// A whole decimal number in [0, max], nothing else.
inline bool ParseWholeNumber(std::string_view text, uint64_t max, uint64_t* out) {
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, *out);
  return !text.empty() && ec == std::errc() && stop == end && *out <= max;
}

// "HOST:PORT" (split at the last ':') with a non-empty host and a port in [min_port, 65535].
inline bool SplitHostPort(std::string_view text, uint16_t min_port, std::string* host,
                          uint16_t* port) {
  const size_t colon = text.rfind(':');
  uint64_t number = 0;
  if (colon == std::string_view::npos || colon == 0 ||
      !ParseWholeNumber(text.substr(colon + 1), 65535, &number) || number < min_port) {
    return false;
  }
  *host = std::string(text.substr(0, colon));
  *port = static_cast<uint16_t>(number);
  return true;
}

}  // namespace troupe
