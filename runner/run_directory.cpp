#include "runner/run_directory.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

#include "base/status_macros.hpp"
#include "runner/output_folder.hpp"

namespace troupe {
namespace {

namespace fs = std::filesystem;

fs::path Target(const std::string& out_dir) { return OutputTarget(out_dir); }

// Creates `path` and lets `write` fill it; `write` answers the errno of a failed write, else 0.
Status WriteWith(const fs::path& path, const std::function<int(std::FILE*)>& write) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return Status::IoError(path.string() + ": cannot write: " + std::strerror(errno));
  }
  int write_errno = write(file);
  // fclose flushes, so a full disk may only show up here.
  if (std::fclose(file) != 0 && write_errno == 0) write_errno = errno;
  if (write_errno != 0) {
    return Status::IoError(path.string() + ": cannot write: " + std::strerror(write_errno));
  }
  return Status::Ok();
}

// Writes what `next` gives, chunk after chunk, to `path` (StageFile's contract).
Status WriteChunks(const fs::path& path, const std::function<bool(std::string*)>& next) {
  return WriteWith(path, [&next](std::FILE* file) {
    std::string chunk;
    for (bool more = true; more;) {
      chunk.clear();
      more = next(&chunk);
      if (std::fwrite(chunk.data(), 1, chunk.size(), file) != chunk.size()) return errno;
    }
    return 0;
  });
}

Status WriteFile(const fs::path& path, const std::string& content) {
  return WriteWith(path, [&content](std::FILE* file) {
    return std::fwrite(content.data(), 1, content.size(), file) == content.size() ? 0 : errno;
  });
}

// Moves `staging` onto `target`, replacing a folder troupe wrote there (never anything else).
// The old folder is set aside first and restored if the second rename fails, so target is never
// lost on error.
Status Replace(const fs::path& staging, const fs::path& target) {
  std::error_code ec;
  fs::file_status existing = fs::symlink_status(target, ec);
  if (!fs::exists(existing)) {
    fs::rename(staging, target, ec);
    if (ec) return Status::IoError(target.string() + ": cannot create: " + ec.message());
    return Status::Ok();
  }
  RETURN_IF_ERROR(CheckOutputFolder(target.string(), "out_dir"));
  fs::path old = target;
  old += ".old-" + std::to_string(::getpid());
  fs::remove_all(old, ec);
  fs::rename(target, old, ec);
  if (ec) return Status::IoError(target.string() + ": cannot move aside: " + ec.message());
  fs::rename(staging, target, ec);
  if (ec) {
    std::error_code restore_ec;
    fs::rename(old, target, restore_ec);
    return Status::IoError(target.string() + ": cannot replace: " + ec.message());
  }
  fs::remove_all(old, ec);  // the new results are in place; a leftover is only litter
  return Status::Ok();
}

}  // namespace

Status CheckRunDirectory(const std::string& out_dir) {
  return CheckOutputFolder(out_dir, "out_dir");
}

Status PrepareStagingDirectory(const std::string& out_dir) {
  RemoveStaleStaging(out_dir, "run");
  const fs::path staging = StagingDirectory(out_dir);
  std::error_code ec;
  fs::create_directories(staging, ec);
  // Marked at once, so that a later run can tell this folder for troupe's if this process dies.
  Status status = ec ? Status::IoError(staging.string() + ": cannot create folder: " + ec.message())
                     : WriteOutputMarker(staging.string(), "staging");
  if (!status.ok()) fs::remove_all(staging, ec);  // a full disk leaves no empty marker behind
  return status;
}

Status StageFile(const std::string& out_dir, const std::string& name,
                 const std::function<bool(std::string* chunk)>& next) {
  const fs::path staging = StagingDirectory(out_dir);
  std::error_code ec;
  Status status = Status::Ok();
  if (!fs::is_directory(staging, ec)) status = PrepareStagingDirectory(out_dir);
  // Named before it exists: the staging folder is troupe's at every moment.
  if (status.ok()) status = NameInOutputMarker(staging.string(), name);
  if (status.ok()) status = WriteChunks(staging / name, next);
  if (!status.ok()) fs::remove_all(staging, ec);
  return status;
}

Status WriteOutputFile(const std::string& folder, const std::string& name,
                       const std::string& content) {
  const fs::path path = fs::path(folder) / name;
  Status status = NameInOutputMarker(folder, name);
  if (status.ok()) status = WriteFile(path, content);
  std::error_code ec;
  if (!status.ok()) fs::remove(path, ec);  // nothing cut short is left looking like a result
  return status;
}

std::string StagingDirectory(const std::string& out_dir) {
  fs::path staging = Target(out_dir);
  staging += ".tmp-" + std::to_string(::getpid());
  return staging.string();
}

Status CommitRunDirectory(const std::string& out_dir, const std::vector<NamedFile>& files) {
  RETURN_IF_ERROR(CheckRunDirectory(out_dir));
  const fs::path staging = StagingDirectory(out_dir);
  std::error_code ec;
  Status status = Status::Ok();
  if (!fs::is_directory(staging, ec)) status = PrepareStagingDirectory(out_dir);
  for (const NamedFile& f : files) {
    if (status.ok()) status = NameInOutputMarker(staging.string(), f.name);
    if (status.ok()) status = WriteFile(staging / f.name, f.content);
  }
  if (status.ok()) status = WriteOutputMarker(staging.string(), "run");
  if (status.ok()) status = Replace(staging, Target(out_dir));
  if (!status.ok()) fs::remove_all(staging, ec);
  return status;
}

std::string CsvField(const std::string& text) {
  std::string field;
  AppendCsvField(text, &field);
  return field;
}

void AppendCsvField(const std::string& text, std::string* out) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) {
    *out += text;
    return;
  }
  *out += '"';
  for (char c : text) {
    if (c == '"') *out += '"';
    *out += c;
  }
  *out += '"';
}

}  // namespace troupe
