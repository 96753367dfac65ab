#include "tests/integration/node_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace troupe::testing {
namespace {

std::string ReadLog(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

NodeProcess::NodeProcess(const std::string& dir, const std::vector<std::string>& extra)
    : log_(dir + "/node.out") {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (dir + "/node.err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = {TROUPE_BINARY, "node", "--listen", "127.0.0.1:0"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn(&pid_, TROUPE_BINARY, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
}

NodeProcess::~NodeProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
}

std::string NodeProcess::WaitForAddress() {
  const std::string prefix = "troupe node listening on ";
  for (int i = 0; i < 200; ++i) {
    const std::string out = ReadLog(log_);
    const auto at = out.find(prefix);
    const auto eol = out.find('\n', at);
    if (at != std::string::npos && eol != std::string::npos) {
      return out.substr(at + prefix.size(), eol - at - prefix.size());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "";
}

}  // namespace troupe::testing
