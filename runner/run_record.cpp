#include "runner/run_record.hpp"

#include <google/protobuf/text_format.h>

#include <filesystem>

#include "base/control_escape.hpp"
#include "config/config_paths.hpp"
#include "runner/run_directory.hpp"

namespace troupe {
namespace {

// `text` on one comment line: a line break would end the comment and leave the rest to be read as
// config, so control characters are written as C escapes (\n, \r, \t, \xHH).
std::string OneLine(const std::string& text) { return EscapeControlCharacters(text); }

}  // namespace

std::string RunRecordText(const config::RunConfig& cfg, const RunProvenance& provenance) {
  std::string text =
      "# The config this run was planned from, every --set, --seed, --out and "
      "--fault applied.\n";
  text += "# troupe ";
  text +=
      provenance.version.empty() ? std::string("(version unknown)") : OneLine(provenance.version);
  text += "\n";
  if (!provenance.command_line.empty()) {
    text += "# command: " + OneLine(provenance.command_line) + "\n";
  }
  std::error_code ec;
  const std::filesystem::path folder = std::filesystem::current_path(ec);
  // Input files by absolute path: the record replays from any folder, wherever it is kept.
  config::RunConfig recorded = cfg;
  if (!ec) {
    ResolveInputPaths(folder, &recorded);
    text += "# started in: " + OneLine(folder.string()) +
            " (input files below are absolute; relative output paths are taken from the folder "
            "troupe runs in)\n";
  }
  text += "# Run it again: troupe run <this file> --out <another folder>\n\n";
  // Strings in protobuf's escapes (a line break as \n, other bytes in octal): they read back as
  // they were, whatever they hold.
  google::protobuf::TextFormat::Printer printer;
  printer.SetUseUtf8StringEscaping(false);
  std::string body;
  printer.PrintToString(recorded, &body);
  return text + body;
}

Status StageRunRecord(const std::string& out_dir, const config::RunConfig& cfg,
                      const RunProvenance& provenance) {
  // The run has not started: a staging folder of this process id can only be a leftover of an
  // earlier process that had the same id and was killed.
  std::error_code ec;
  std::filesystem::remove_all(StagingDirectory(out_dir), ec);
  std::string text = RunRecordText(cfg, provenance);
  return StageFile(out_dir, kRunRecordFile, [&text](std::string* chunk) {
    chunk->swap(text);
    return false;
  });
}

}  // namespace troupe
