// Writing text that may hold control characters on one line: a line break, tab or carriage
// return as \n, \t, \r, any other control character as \xHH, the rest as it is (UTF-8 stays
// readable). Used for comment lines (a line break would end the comment) and for the shell's
// $'...' quoting, which reads the same escapes. Header-only: base/ is the bottom library.
#pragma once

#include <string>
#include <string_view>

namespace troupe {

// `text` with its control characters escaped, and each character of `also` (for instance the
// quote and backslash of $'...') preceded by a backslash.
inline std::string EscapeControlCharacters(std::string_view text, std::string_view also = "") {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (also.find(c) != std::string_view::npos) {
      out += {'\\', c};
    } else if (c == '\n' || c == '\t' || c == '\r') {
      out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xf]};
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace troupe
