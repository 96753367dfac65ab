#include "runner/output_folder.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace troupe {
namespace {

namespace fs = std::filesystem;

constexpr char kMarkerPrefix[] = "troupe output: ";
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
    } else if (!fs::is_regular_file(status) || named.count(name) == 0) {
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
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name != kOutputMarker) entries.push_back(name);
  }
  if (ec) return Status::IoError(folder + ": cannot list: " + ec.message());
  std::sort(entries.begin(), entries.end());
  const fs::path marker = fs::path(folder) / kOutputMarker;
  std::ofstream out(marker, std::ios::binary | std::ios::trunc);
  out << OutputMarkerText(kind, entries);
  out.close();
  if (!out) return Status::IoError(marker.string() + ": cannot write");
  return Status::Ok();
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

void RemoveStaleStaging(const std::string& path) {
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
    if (tmp_pid == 0 && old_pid == 0) continue;
    std::string kind;
    std::set<std::string> entries;
    std::error_code entry_ec;  // one entry gone meanwhile does not end the scan
    if (!fs::is_directory(it->symlink_status(entry_ec)) ||
        !ReadMarker(it->path(), &kind, &entries)) {
      continue;
    }
    if (tmp_pid != 0 && tmp_pid != ::getpid() && !ProcessAlive(tmp_pid)) {
      stale_tmp.push_back(it->path());
    }
    if (old_pid != 0 && old_pid != ::getpid() && !ProcessAlive(old_pid)) {
      stale_old.push_back(it->path());
    }
  }
  for (const fs::path& tmp : stale_tmp) fs::remove_all(tmp, ec);
  for (const fs::path& old : stale_old) {
    // A process killed between its two renames: the earlier results are the only ones left.
    if (!fs::exists(fs::symlink_status(target, ec))) {
      fs::rename(old, target, ec);
    } else if (IsTroupeFolder(old.string())) {
      fs::remove_all(old, ec);
    }
  }
}

}  // namespace troupe
