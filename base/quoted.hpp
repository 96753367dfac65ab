// Quoting a value — a flag, a config field, a trace field — into an error message, bounded. An
// error names the value that is wrong, but a value can be anything a user or a file holds (a 50 MB
// string): a message quotes at most kMaxQuotedBytes of it, then "… (N bytes)", so that bad input
// always makes one short line. Every error that echoes a value goes through these two.
// Header-only: base/ is the bottom library.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace troupe {

inline constexpr size_t kMaxQuotedBytes = 120;

// `text` itself when at most `max` bytes; else its first `max` bytes (less, not to split a UTF-8
// character) and "… (N bytes)", N being the whole value's size.
inline std::string Excerpt(std::string_view text, size_t max = kMaxQuotedBytes) {
  if (text.size() <= max) return std::string(text);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out(text.substr(0, cut));
  out += "… (";
  out += std::to_string(text.size());
  out += " bytes)";
  return out;
}

// Excerpt(text) in single quotes: 'text', or 'its first bytes…' (N bytes).
inline std::string Quoted(std::string_view text) {
  std::string out(1, '\'');
  if (text.size() <= kMaxQuotedBytes) {
    out.append(text);
    out += '\'';
    return out;
  }
  const std::string excerpt = Excerpt(text);
  const size_t size_note = excerpt.rfind(" (");  // after the "…"
  out.append(excerpt, 0, size_note);
  out += '\'';
  out.append(excerpt, size_note, std::string::npos);
  return out;
}

}  // namespace troupe
