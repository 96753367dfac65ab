// A `troupe node` child process for multi-process tests: listens on an ephemeral loopback port,
// logs to DIR/node.out and DIR/node.err, and is stopped (SIGTERM) when destroyed. Needs
// TROUPE_BINARY (the troupe binary's path) defined where it is compiled; the benchmarks use it too.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace troupe::testing {

class NodeProcess {
 public:
  // `extra`: more flags for `troupe node` (e.g. --credentials DIR).
  explicit NodeProcess(const std::string& dir, const std::vector<std::string>& extra = {});
  ~NodeProcess();
  NodeProcess(const NodeProcess&) = delete;
  NodeProcess& operator=(const NodeProcess&) = delete;

  // "127.0.0.1:PORT" once the node says it listens, "" after 10 s.
  std::string WaitForAddress();
  // The node's process id (-1 if it could not be started).
  pid_t pid() const { return pid_; }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

}  // namespace troupe::testing
