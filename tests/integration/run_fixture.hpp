// Helpers the integration tests share: run a config in this process (the same path `troupe run`
// takes), run the troupe binary as a child process, and read a run directory back.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runner/cluster/cluster_run.hpp"
#include "tests/support/scoped_env.hpp"

namespace troupe::testing {

// Parses `textproto`, applies `sets`, validates, plans and executes it. Fails the calling test
// (ADD_FAILURE) and returns an empty result on any error. Writes a run directory only when `sets`
// name one (run.out_dir=...).
RunResult RunConfigText(const std::string& textproto, const std::vector<std::string>& sets = {});

// Same, for a config file of the repository (path relative to the source tree).
RunResult RunRepoConfig(const std::string& relative_path,
                        const std::vector<std::string>& sets = {});

struct ProcessResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs the troupe binary with `args` (no shell interpretation of the arguments).
ProcessResult RunTroupe(const std::vector<std::string>& args);

// Starts the program argv[0] (a path) with stdout and stderr in files and returns its pid, or -1.
int SpawnWithLogs(std::vector<std::string> argv, const std::string& out_path,
                  const std::string& err_path);
// Waits for child `pid`: its exit status, 128 + the signal that ended it, or -1.
int WaitForExit(int pid);

// A fresh, empty folder under the test's temporary directory, removed when the test program ends
// with every test passed.
std::string FreshDir(const std::string& name);
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& content);

// Parses a CSV with a header into rows of column -> value.
std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path);

std::string SourcePath(const std::string& relative);  // a path inside the repository
std::string DataPath(const std::string& name);        // data/<name>

}  // namespace troupe::testing
