#include "apps/report_command.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "apps/shared_files.hpp"
#include "runner/output_folder.hpp"

extern char** environ;

namespace troupe {
namespace {

namespace fs = std::filesystem;

std::string FindPython() {
  if (const char* chosen = std::getenv("TROUPE_PYTHON"); chosen != nullptr && *chosen != '\0') {
    return chosen;
  }
  if (::access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return "python3";
}

// Runs argv[0] (looked up on PATH when it has no '/') and waits for it; -1 if it cannot start.
int SpawnAndWait(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (int error = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ); error != 0) {
    std::cerr << "troupe: cannot run " << argv[0] << ": " << std::strerror(error)
              << " (install python3-matplotlib and python3-pandas: scripts/install-deps.sh)\n";
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::cerr << "troupe: waiting for " << argv[0] << ": " << std::strerror(errno) << "\n";
      return -1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::cerr << "troupe: " << argv[0] << " stopped by signal " << WTERMSIG(status) << "\n";
  return -1;
}

// A report folder replaces what is at `out`: it must not be one of the runs, nor hold one.
Status CheckNotHoldingRuns(const fs::path& out, const std::vector<std::string>& run_dirs,
                           const std::string& what) {
  std::error_code ec;
  const std::string target = fs::weakly_canonical(out, ec).string() + "/";
  for (const std::string& run : run_dirs) {
    const std::string path = fs::weakly_canonical(run, ec).string() + "/";
    if (path.compare(0, target.size(), target) == 0) {
      return Status::InvalidInput(what + " " + out.string() +
                                  ": is (or holds) a run directory; not replacing it");
    }
  }
  return Status::Ok();
}

}  // namespace

int RunReport(const std::vector<std::string>& run_dirs, const std::string& out_dir) {
  if (run_dirs.empty()) {
    std::cerr << "troupe: report: no run directory given\n";
    return 2;
  }
  const std::string script = FindShippedFile("scripts/plot.py");
  if (script.empty()) {
    std::cerr << "troupe: cannot find scripts/plot.py (looked in " << ShippedFilePlaces() << ")\n";
    return 1;
  }
  fs::path out = out_dir;
  if (out.empty()) {
    fs::path first = fs::path(run_dirs.front()).lexically_normal();
    if (!first.has_filename() && first.has_parent_path()) first = first.parent_path();  // "a/"
    out = first / "report";
  }
  // plot.py checks these too; here they are refused before Python starts, with exit status 2.
  const std::string what = out_dir.empty() ? "report" : "--out";
  Status checked = CheckNotHoldingRuns(out, run_dirs, what);
  if (checked.ok()) checked = CheckOutputFolder(out.string(), what);
  if (!checked.ok()) {
    std::cerr << "troupe: " << checked.message() << "\n";
    return checked.exit_code();
  }
  RemoveStaleStaging(out.string(), "report");
  std::vector<std::string> argv = {FindPython(), "-B", script, "--out", out.string(), "--"};
  argv.insert(argv.end(), run_dirs.begin(), run_dirs.end());
  const int status = SpawnAndWait(argv);
  if (status < 0) return 1;
  if (status == 0) std::cout << "report: " << (out / "report.html").string() << "\n";
  return status;
}

}  // namespace troupe
