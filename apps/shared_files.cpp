#include "apps/shared_files.hpp"

#include <filesystem>
#include <system_error>
#include <vector>

namespace troupe {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Places() {
  std::vector<fs::path> places;
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error) places.push_back(exe.parent_path().parent_path() / "share" / "troupe");
  places.push_back(fs::path(TROUPE_SOURCE_DIR));
  return places;
}

}  // namespace

std::string FindShippedFile(const std::string& relative) {
  for (const fs::path& place : Places()) {
    std::error_code error;
    const fs::path candidate = place / relative;
    if (fs::is_regular_file(candidate, error)) {
      return candidate.string();
    }
  }
  return "";
}

std::string ShippedFilePlaces() {
  std::string text;
  for (const fs::path& place : Places()) {
    if (!text.empty()) text += ", ";
    text += place.string();
  }
  return text;
}

std::string DefaultConfigPath() {
  const std::string relative = "configs/default.textproto";
  std::error_code error;
  if (fs::is_regular_file(relative, error)) return relative;
  const std::string shipped = FindShippedFile(relative);
  return shipped.empty() ? relative : shipped;
}

}  // namespace troupe
