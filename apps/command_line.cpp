#include "apps/command_line.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace troupe {

std::string ShellWord(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_./=:,@%+-").find(c) != std::string_view::npos;
  });
  if (plain) return text;
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
