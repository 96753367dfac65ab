#include "runner/run_record.hpp"

#include <google/protobuf/text_format.h>

#include <filesystem>
#include <fstream>

#include "runner/run_directory.hpp"

namespace troupe {

std::string RunRecordText(const config::RunConfig& cfg, const RunProvenance& provenance) {
  std::string text =
      "# The config this run was planned from, every --set, --seed, --out and "
      "--fault applied.\n";
  text += "# troupe ";
  text += provenance.version.empty() ? std::string("(version unknown)") : provenance.version;
  text += "\n";
  if (!provenance.command_line.empty()) text += "# command: " + provenance.command_line + "\n";
  std::error_code ec;
  const std::string folder = std::filesystem::current_path(ec).string();
  if (!ec) text += "# started in: " + folder + " (relative paths below are taken from there)\n";
  text += "# Run it again: troupe run <this file> --out <another folder>\n\n";
  std::string body;
  google::protobuf::TextFormat::PrintToString(cfg, &body);
  return text + body;
}

Status StageRunRecord(const std::string& out_dir, const config::RunConfig& cfg,
                      const RunProvenance& provenance) {
  // The run has not started: a staging folder of this process id can only be a leftover of an
  // earlier process that had the same id and was killed.
  std::error_code ec;
  std::filesystem::remove_all(StagingDirectory(out_dir), ec);
  if (Status s = PrepareStagingDirectory(out_dir); !s.ok()) return s;
  const std::string path = StagingDirectory(out_dir) + "/" + kRunRecordFile;
  std::ofstream file(path, std::ios::binary);
  file << RunRecordText(cfg, provenance);
  file.close();
  if (!file) return Status::IoError(path + ": cannot write");
  return Status::Ok();
}

}  // namespace troupe
