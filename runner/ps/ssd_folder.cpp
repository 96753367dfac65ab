#include "runner/ps/ssd_folder.hpp"

#include <linux/magic.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/status_macros.hpp"
#include "paramserver/ssd_store.hpp"
#include "runner/output_folder.hpp"

namespace troupe {
namespace {

namespace fs = std::filesystem;

Status Refuse(const std::string& what, const std::string& path, const std::string& why) {
  return Status::InvalidInput(what + " " + path + ": " + why);
}

// Filesystems whose folders cannot hold a store's files whoever asks (root may "write" there).
constexpr int64_t kPseudoFilesystems[] = {
    PROC_SUPER_MAGIC, SYSFS_MAGIC,      CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, DEVPTS_SUPER_MAGIC,
    DEBUGFS_MAGIC,    SECURITYFS_MAGIC, TRACEFS_MAGIC,      BPF_FS_MAGIC,        PSTOREFS_MAGIC};

bool PseudoFilesystem(int64_t type) {
  for (int64_t pseudo : kPseudoFilesystems) {
    if (type == pseudo) return true;
  }
  return false;
}

// Why the existing folder `dir` cannot hold new files ("" when it can).
std::string CannotHoldFiles(const fs::path& dir) {
  struct statfs fs_info;
  struct statvfs vfs_info;
  if (::statfs(dir.c_str(), &fs_info) == 0 && PseudoFilesystem(fs_info.f_type)) {
    return dir.string() + " is on a pseudo filesystem (/proc, /sys, ...) that holds no files";
  }
  if (::statvfs(dir.c_str(), &vfs_info) == 0 && (vfs_info.f_flag & ST_RDONLY) != 0) {
    return dir.string() + " is on a read-only filesystem";
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return dir.string() + " is not writable";
  return "";
}

Status CheckRoot(const std::string& ssd_dir, const std::string& what) {
  std::error_code ec;
  fs::path folder = fs::absolute(ssd_dir, ec);
  if (ec) return Refuse(what, ssd_dir, "not a usable path: " + ec.message());
  // The nearest existing folder on the way: the root itself, or where it would be created.
  while (!fs::exists(fs::status(folder, ec)) && folder.has_relative_path()) {
    folder = folder.parent_path();
  }
  if (!fs::is_directory(fs::status(folder, ec))) {
    return Refuse(what, ssd_dir,
                  folder.string() + (folder == fs::absolute(ssd_dir, ec) ? " exists and" : "") +
                      " is not a folder");
  }
  if (const std::string why = CannotHoldFiles(folder); !why.empty()) {
    return Refuse(what, ssd_dir, why);
  }
  return Status::Ok();
}

bool MarkedSsdFolder(const fs::path& dir) {
  std::ifstream in(dir / kOutputMarker);
  std::string line;
  return in && std::getline(in, line) && line + "\n" == OutputMarkerText(kSsdPsKind, {});
}

// Ok when node folder `dir` is missing, empty, or troupe's ssd-ps folder holding only the marker
// and the store's files.
Status CheckNodeFolder(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(dir, ec);
  if (!fs::exists(status)) return Status::Ok();
  if (!fs::is_directory(status)) {
    return Refuse(what, dir.string(), "exists and is not a folder; not replacing it");
  }
  if (fs::is_empty(dir, ec)) return Status::Ok();
  if (!MarkedSsdFolder(dir)) {
    return Refuse(what, dir.string(),
                  "exists and is not an SSD-PS folder troupe wrote (no " +
                      std::string(kOutputMarker) + "); not emptying it");
  }
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == kOutputMarker) continue;
    std::error_code entry_ec;
    if (!paramserver::SsdStore::IsStoreFileName(name) ||
        !fs::is_regular_file(it->symlink_status(entry_ec))) {
      return Refuse(what, dir.string(),
                    "holds '" + name +
                        "', which troupe did not write; not emptying it: move it away or choose "
                        "another paramserver.ssd_dir");
    }
  }
  if (ec) return Refuse(what, dir.string(), "cannot list: " + ec.message());
  return Status::Ok();
}

fs::path NodeFolder(const std::string& ssd_dir, int32_t node) {
  return fs::path(ssd_dir) / ("node-" + std::to_string(node));
}

}  // namespace

Status CheckSsdDir(const std::string& ssd_dir, int32_t nodes, const std::string& what) {
  if (ssd_dir.empty()) return Status::Ok();
  RETURN_IF_ERROR(CheckRoot(ssd_dir, what));
  for (int32_t m = 0; m < nodes; ++m) {
    RETURN_IF_ERROR(CheckNodeFolder(NodeFolder(ssd_dir, m), what));
  }
  return Status::Ok();
}

Status ResetSsdNodeFolder(const std::string& dir, const std::string& what) {
  RETURN_IF_ERROR(CheckNodeFolder(dir, what));
  return ResetScratchFolder(dir, kSsdPsKind, what);
}

}  // namespace troupe
