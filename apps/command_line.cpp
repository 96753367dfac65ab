#include "apps/command_line.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "base/control_escape.hpp"

namespace troupe {
namespace {

// $'...': the shell's quoting with C escapes, so that a line break or other control character in
// an argument keeps the command on one line (config.textproto's header is comments).
std::string AnsiCQuoted(const std::string& text) {
  return "$'" + EscapeControlCharacters(text, "\\'") + "'";
}

}  // namespace

std::string ShellWord(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_./=:,@%+-").find(c) != std::string_view::npos;
  });
  if (plain) return text;
  const bool control = std::any_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (control) return AnsiCQuoted(text);
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";  // close, an escaped quote, reopen
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

RunProvenance Provenance(const std::string& version, int argc, char** argv) {
  RunProvenance provenance;
  provenance.version = version;
  provenance.command_line = "troupe";
  for (int i = 1; i < argc; ++i) {
    provenance.command_line += ' ';
    provenance.command_line += ShellWord(argv[i]);
  }
  return provenance;
}

}  // namespace troupe
