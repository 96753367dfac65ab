// Whether `troupe report` can draw here: tests of it skip, saying why, where it cannot.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace troupe::testing {

// The interpreter `troupe report` runs (apps/report_command.hpp): $TROUPE_PYTHON, else
// /usr/bin/python3, else python3 on PATH. Returns why it cannot draw, or "" when it can.
inline std::string WhyPlottingIsMissing() {
  std::string python = "python3";
  if (const char* chosen = std::getenv("TROUPE_PYTHON"); chosen != nullptr && *chosen != '\0') {
    python = chosen;
  } else if (::access("/usr/bin/python3", X_OK) == 0) {
    python = "/usr/bin/python3";
  }
  std::vector<std::string> argv_strings = {python, "-c", "import matplotlib, pandas"};
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int status = 0;
  const bool ran = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0 &&
                   ::waitpid(pid, &status, 0) == pid;
  posix_spawn_file_actions_destroy(&actions);
  if (ran && WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return python + " cannot import matplotlib and pandas (scripts/install-deps.sh installs " +
         "python3-matplotlib and python3-pandas)";
}

}  // namespace troupe::testing
