#include "tests/integration/run_fixture.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"

extern char** environ;

namespace troupe::testing {
namespace fs = std::filesystem;

RunResult RunConfigText(const std::string& textproto, const std::vector<std::string>& sets) {
  RunResult result;
  config::RunConfig cfg;
  Status s = ParseConfigText(textproto, "test.textproto", &cfg);
  for (size_t i = 0; s.ok() && i < sets.size(); ++i) s = ApplyOverride(sets[i], &cfg);
  if (s.ok()) s = ValidateConfig(cfg, "test.textproto");
  RunPlan plan;
  if (s.ok()) s = PlanRun(cfg, "test.textproto", &plan);
  // Tests read the records in memory; a run directory is written only when a test names one.
  const bool wants_out_dir = std::any_of(sets.begin(), sets.end(), [](const std::string& set) {
    return set.rfind("run.out_dir=", 0) == 0;
  });
  if (!wants_out_dir) plan.out_dir.clear();
  if (s.ok()) s = ExecuteRun(std::move(plan), ExecuteOptions{}, &result);
  if (!s.ok()) ADD_FAILURE() << "run failed: " << s.message();
  return result;
}

RunResult RunRepoConfig(const std::string& relative_path, const std::vector<std::string>& sets) {
  return RunConfigText(ReadFile(SourcePath(relative_path)), sets);
}

ProcessResult RunTroupe(const std::vector<std::string>& args) {
  const std::string dir = FreshDir("proc");
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT, 0644);
  std::vector<std::string> argv_strings = {TROUPE_BINARY};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ProcessResult result;
  if (posix_spawn(&pid, TROUPE_BINARY, &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

int SpawnWithLogs(std::vector<std::string> argv, const std::string& out_path,
                  const std::string& err_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT, 0644);
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

int WaitForExit(int pid) {
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

namespace {

// Removes the folders FreshDir made once the test program ends with every test passed (ctest runs
// one test a process); a failed test's are kept to be looked at.
class FreshDirCleanup : public ::testing::Environment {
 public:
  void Add(const fs::path& dir) { dirs_.push_back(dir); }
  void TearDown() override {
    if (!::testing::UnitTest::GetInstance()->Passed()) return;
    std::error_code ignored;
    for (const fs::path& dir : dirs_) fs::remove_all(dir, ignored);
  }

 private:
  std::vector<fs::path> dirs_;
};

FreshDirCleanup& Cleanup() {
  // Owned by GoogleTest once registered.
  static FreshDirCleanup* cleanup =
      static_cast<FreshDirCleanup*>(::testing::AddGlobalTestEnvironment(new FreshDirCleanup));
  return *cleanup;
}

}  // namespace

std::string FreshDir(const std::string& name) {
  static int counter = 0;
  const fs::path dir =
      fs::path(::testing::TempDir()) /
      ("troupe-" + std::to_string(getpid()) + "-" + name + "-" + std::to_string(++counter));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Cleanup().Add(dir);
  return dir.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path) {
  std::istringstream in(ReadFile(path));
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& text) {
    std::vector<std::string> fields;
    std::stringstream ss(text);
    std::string field;
    while (std::getline(ss, field, ',')) fields.push_back(field);
    return fields;
  };
  if (std::getline(in, line)) header = split(line);
  while (std::getline(in, line)) {
    std::vector<std::string> fields = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string SourcePath(const std::string& relative) {
  return std::string(TROUPE_SOURCE_DIR) + "/" + relative;
}

std::string DataPath(const std::string& name) { return std::string(TROUPE_DATA_DIR) + "/" + name; }

}  // namespace troupe::testing
