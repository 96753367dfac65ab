#include "runner/output_folder.hpp"

#include <linux/magic.h>
#include <signal.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/status_macros.hpp"
#include "paramserver/ssd_store.hpp"

namespace troupe {
namespace {

namespace fs = std::filesystem;

constexpr char kMarkerPrefix[] = "troupe output: ";
// A marker being rewritten: written whole under this name (named in the old marker first), then
// renamed over the old one.
constexpr char kMarkerUpdate[] = ".troupe-output.new";
// Room for what troupe appends to an output folder's name: ".tmp-PID", ".old-PID".
constexpr size_t kSuffixRoom = 16;
// Deeper than any folder troupe writes (a sweep holds runs, a run may hold its report).
constexpr int kMaxDepth = 8;

// The marker's kind and entries; false when `folder` has no readable marker.
bool ReadMarker(const fs::path& folder, std::string* kind, std::set<std::string>* entries) {
  std::ifstream in(folder / kOutputMarker);
  std::string line;
  if (!in || !std::getline(in, line) || line.rfind(kMarkerPrefix, 0) != 0) return false;
  *kind = line.substr(sizeof(kMarkerPrefix) - 1);
  while (std::getline(in, line)) {
    if (!line.empty()) entries->insert(line);
  }
  return true;
}

// An SSD-PS node folder (kind "ssd-ps") also holds the files its store writes as it goes, which
// no marker can name ahead: the store's own naming rule tells them from a file a user added.
bool IsStoreFileOf(const std::string& kind, const std::string& name) {
  return kind == kSsdPsKind && paramserver::SsdStore::IsStoreFileName(name);
}

bool IsTroupeFolderAt(const fs::path& folder, int depth) {
  std::error_code ec;
  if (depth > kMaxDepth || !fs::is_directory(fs::symlink_status(folder, ec))) return false;
  std::string kind;
  std::set<std::string> named;
  if (!ReadMarker(folder, &kind, &named)) return false;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == kOutputMarker) continue;
    const fs::file_status status = it->symlink_status(ec);
    if (fs::is_directory(status)) {
      if (!IsTroupeFolderAt(it->path(), depth + 1)) return false;
    } else if (!fs::is_regular_file(status) ||
               (named.count(name) == 0 && !IsStoreFileOf(kind, name))) {
      return false;
    }
  }
  return !ec;
}

bool ProcessAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// The pid in "LEAF.tmp-PID" or "LEAF.old-PID" for `suffix` ".tmp-" or ".old-"; 0 otherwise.
pid_t LeftoverPid(const std::string& name, const std::string& leaf, const std::string& suffix) {
  const std::string prefix = leaf + suffix;
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return 0;
  pid_t pid = 0;
  const char* last = name.data() + name.size();
  auto [end, ec] = std::from_chars(name.data() + prefix.size(), last, pid);
  return ec == std::errc() && end == last && pid > 0 ? pid : 0;
}

std::string Quote(const std::string& what, const std::string& path) {
  return what.empty() ? path : what + " " + path;
}

// Writes `text` to `path` opened with `mode` ("wb", "ab"), every write and the close checked.
Status WriteText(const fs::path& path, const std::string& text, const char* mode) {
  std::FILE* file = std::fopen(path.c_str(), mode);
  if (file == nullptr) {
    return Status::IoError(path.string() + ": cannot write: " + std::strerror(errno));
  }
  int error = std::fwrite(text.data(), 1, text.size(), file) == text.size() ? 0 : errno;
  if (std::fclose(file) != 0 && error == 0) error = errno;  // a full disk may show only here
  if (error != 0) return Status::IoError(path.string() + ": cannot write: " + std::strerror(error));
  return Status::Ok();
}

// The entries of `folder` but its marker (and a marker update a killed process left), sorted.
Status ListEntries(const std::string& folder, std::vector<std::string>* entries) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name != kOutputMarker && name != kMarkerUpdate) entries->push_back(name);
  }
  if (ec) return Status::IoError(folder + ": cannot list: " + ec.message());
  std::sort(entries->begin(), entries->end());
  return Status::Ok();
}

// A staging folder whose process died while writing its first marker: the marker, cut short, is
// all it holds.
bool HoldsOnlyACutMarker(const fs::path& folder) {
  std::vector<std::string> entries;
  std::error_code ec;
  if (!ListEntries(folder.string(), &entries).ok() || !entries.empty() ||
      !fs::is_regular_file(fs::symlink_status(folder / kOutputMarker, ec))) {
    return false;
  }
  const std::string whole = std::string(kMarkerPrefix) + "staging\n";
  std::ifstream in(folder / kOutputMarker, std::ios::binary);
  std::string text(whole.size(), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text.size() < whole.size() && whole.compare(0, text.size(), text) == 0;
}

// A folder troupe wrote whole: troupe's, of `kind`, holding every entry its marker names and the
// files every folder of that kind has.
bool IsCompleteTroupeFolder(const fs::path& folder, const std::string& kind) {
  std::string marked_kind;
  std::set<std::string> named;
  if (!IsTroupeFolderAt(folder, 0) || !ReadMarker(folder, &marked_kind, &named) ||
      marked_kind != kind) {
    return false;
  }
  static const std::map<std::string, std::vector<std::string>> kRequired = {
      {"run", {"config.textproto", "summary.json"}}, {"report", {"report.html"}}};
  if (auto it = kRequired.find(kind); it != kRequired.end()) {
    named.insert(it->second.begin(), it->second.end());
  }
  std::error_code ec;
  for (const std::string& name : named) {
    if (!fs::is_regular_file(fs::symlink_status(folder / name, ec)) &&
        !fs::is_directory(fs::symlink_status(folder / name, ec))) {
      return false;
    }
  }
  return true;
}

// Why troupe cannot have a folder at `target` for the length of its path, or "".
std::string TooLong(const fs::path& target) {
  const std::string text = target.string();
  if (text.size() + kSuffixRoom >= PATH_MAX) {
    return "is too long (" + std::to_string(text.size()) + " characters; at most " +
           std::to_string(PATH_MAX - 1 - kSuffixRoom) + ")";
  }
  for (const fs::path& part : target) {
    if (part.string().size() > NAME_MAX) {
      return "has a part too long (" + std::to_string(part.string().size()) +
             " characters; at most " + std::to_string(NAME_MAX) + ")";
    }
  }
  const size_t leaf = target.filename().string().size();
  if (leaf + kSuffixRoom > NAME_MAX) {
    return "has a folder name too long (" + std::to_string(leaf) + " characters; at most " +
           std::to_string(NAME_MAX - kSuffixRoom) + ")";
  }
  return "";
}

// The kernel file system `existing` is on (/proc, /sys, ...), or "" for one that holds files.
std::string KernelFileSystem(const fs::path& existing) {
  struct statfs info;
  if (::statfs(existing.c_str(), &info) != 0) return "";
  switch (static_cast<unsigned long>(info.f_type)) {
    case PROC_SUPER_MAGIC:
      return "/proc";
    case SYSFS_MAGIC:
      return "/sys";
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
      return "a cgroup file system";
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
      return "a kernel file system";
    default:
      return "";
  }
}

}  // namespace

std::string OutputTarget(const std::string& path) {
  fs::path target = fs::path(path).lexically_normal();
  if (!target.has_filename() && target.has_parent_path()) target = target.parent_path();
  return target.string();
}

bool IsTroupeFolder(const std::string& path) { return IsTroupeFolderAt(path, 0); }

Status CheckOutputFolder(const std::string& path, const std::string& what) {
  const fs::path target = OutputTarget(path);
  const std::string leaf = target.filename().string();
  auto refuse = [&](const std::string& why) {
    return Status::InvalidInput(Quote(what, path) + ": " + why);
  };
  if (leaf.empty() || leaf == "." || leaf == "..") return refuse("must name a folder");
  if (const std::string why = TooLong(target); !why.empty()) {
    // A line, not a screenful: the path's start says which one it was.
    constexpr size_t kShown = 80;
    const std::string shown = path.size() <= kShown ? path : path.substr(0, kShown) + "...";
    return Status::InvalidInput(Quote(what, shown) + ": " + why);
  }
  std::error_code ec, cwd_ec;
  const fs::path absolute = fs::weakly_canonical(fs::absolute(target, ec), ec);
  const fs::path cwd = fs::current_path(cwd_ec);
  if (!ec && !cwd_ec && !absolute.empty()) {
    const std::string here = cwd.string() + "/";
    if ((absolute.string() + "/").size() <= here.size() &&
        here.compare(0, absolute.string().size() + 1, absolute.string() + "/") == 0) {
      return refuse("is the current folder or holds it; not replacing it");
    }
  }
  const fs::file_status status = fs::symlink_status(target, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) return refuse("exists and is not a folder; not replacing it");
    if (const std::string kernel = KernelFileSystem(target); !kernel.empty()) {
      return refuse("is inside " + kernel + ", which holds no files; choose another folder");
    }
    if (!fs::is_empty(target, ec) && !IsTroupeFolder(target.string())) {
      return refuse("exists and was not written by troupe (no " + std::string(kOutputMarker) +
                    ", or files troupe did not write); not replacing it: move it away or choose "
                    "another folder");
    }
    return Status::Ok();
  }
  fs::path ancestor = fs::absolute(target, ec).parent_path();
  while (!ancestor.empty() && !fs::exists(fs::symlink_status(ancestor, ec))) {
    if (ancestor == ancestor.root_path()) break;
    ancestor = ancestor.parent_path();
  }
  if (const std::string kernel = KernelFileSystem(ancestor); !kernel.empty()) {
    return refuse("is inside " + kernel + ", which holds no files; choose another folder");
  }
  if (!fs::is_directory(ancestor, ec)) return refuse(ancestor.string() + " is not a folder");
  if (::access(ancestor.c_str(), W_OK | X_OK) != 0) {
    return refuse("cannot be created: " + ancestor.string() + " is not writable");
  }
  return Status::Ok();
}

std::string OutputMarkerText(const std::string& kind, const std::vector<std::string>& entries) {
  std::string text = kMarkerPrefix + kind + "\n";
  for (const std::string& entry : entries) text += entry + "\n";
  return text;
}

Status WriteOutputMarker(const std::string& folder, const std::string& kind) {
  std::vector<std::string> entries;
  RETURN_IF_ERROR(ListEntries(folder, &entries));
  const std::string text = OutputMarkerText(kind, entries);
  const fs::path marker = fs::path(folder) / kOutputMarker;
  std::string old_kind;
  std::set<std::string> old_entries;
  // A folder not marked yet holds nothing a marker cut short could leave unaccounted for.
  if (!ReadMarker(folder, &old_kind, &old_entries)) return WriteText(marker, text, "wb");
  // Rewritten in place, a marker cut short by a kill or a full disk would leave the folder
  // looking like a user's: the new one is written beside it, named in it, then renamed over it.
  RETURN_IF_ERROR(NameInOutputMarker(folder, kMarkerUpdate));
  const fs::path update = fs::path(folder) / kMarkerUpdate;
  Status status = WriteText(update, text, "wb");
  std::error_code ec;
  if (status.ok()) fs::rename(update, marker, ec);
  if (ec) status = Status::IoError(marker.string() + ": cannot replace: " + ec.message());
  if (!status.ok()) fs::remove(update, ec);
  return status;
}

Status NameInOutputMarker(const std::string& folder, const std::string& name) {
  const fs::path marker = fs::path(folder) / kOutputMarker;
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(marker, ec))) {
    return Status::Internal(folder + ": has no " + kOutputMarker + " to name " + name + " in");
  }
  // A line cut short by an earlier process must not swallow this name.
  std::ifstream in(marker, std::ios::binary | std::ios::ate);
  bool line_open = false;
  if (in && in.tellg() > 0) {
    in.seekg(-1, std::ios::end);
    line_open = in.get() != '\n';
  }
  return WriteText(marker, (line_open ? "\n" : "") + name + "\n", "ab");
}

Status ResetScratchFolder(const std::string& path, const std::string& kind,
                          const std::string& what) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (fs::exists(status)) {
    std::string marked_kind;
    std::set<std::string> entries;
    const bool ours = fs::is_directory(status) &&
                      (fs::is_empty(path, ec) ||
                       (ReadMarker(path, &marked_kind, &entries) && marked_kind == kind));
    if (!ours) {
      return Status::InvalidInput(Quote(what, path) + ": exists and is not a " + kind +
                                  " folder troupe wrote (no " + kOutputMarker +
                                  "); not emptying it");
    }
    fs::remove_all(path, ec);
    if (ec) return Status::IoError(path + ": cannot empty: " + ec.message());
  }
  fs::create_directories(path, ec);
  if (ec) return Status::IoError(path + ": cannot create folder: " + ec.message());
  return WriteOutputMarker(path, kind);
}

void RemoveStaleStaging(const std::string& path, const std::string& kind) {
  const fs::path target = OutputTarget(path);
  const std::string leaf = target.filename().string();
  fs::path parent = target.parent_path();
  if (parent.empty()) parent = ".";
  std::error_code ec;
  std::vector<fs::path> stale_tmp, stale_old;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    // By name first: the parent may be a folder of thousands (/tmp), only a few of them ours.
    const std::string name = it->path().filename().string();
    const pid_t tmp_pid = LeftoverPid(name, leaf, ".tmp-");
    const pid_t old_pid = LeftoverPid(name, leaf, ".old-");
    std::error_code entry_ec;  // one entry gone meanwhile does not end the scan
    if ((tmp_pid == 0 && old_pid == 0) || !fs::is_directory(it->symlink_status(entry_ec))) {
      continue;
    }
    const pid_t pid = tmp_pid != 0 ? tmp_pid : old_pid;
    if (pid == ::getpid() || ProcessAlive(pid)) continue;
    // A marker alone says nothing of the files beside it: everything in the folder must be
    // accounted for, or it may hold a user's files and is left alone.
    if (tmp_pid != 0 && (IsTroupeFolderAt(it->path(), 0) || HoldsOnlyACutMarker(it->path()))) {
      stale_tmp.push_back(it->path());
    }
    if (old_pid != 0 && IsCompleteTroupeFolder(it->path(), kind)) stale_old.push_back(it->path());
  }
  for (const fs::path& tmp : stale_tmp) fs::remove_all(tmp, ec);
  for (const fs::path& old : stale_old) {
    // A process killed between its two renames: the earlier results are the only ones left.
    if (!fs::exists(fs::symlink_status(target, ec))) {
      fs::rename(old, target, ec);
    } else {
      fs::remove_all(old, ec);
    }
  }
}

}  // namespace troupe
