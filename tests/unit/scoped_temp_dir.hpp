// ScopedTempDir: a path under the test's temporary directory (::testing::TempDir(), $TEST_TMPDIR
// when set), unique to this process, empty when made, and removed with everything in it when the
// object goes out of scope, so a test run leaves nothing behind in /tmp. The folder itself is not
// created: the code under test makes it (an SsdStore's root, say). A child process that ends with
// _exit leaves it to the parent.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace troupe::test {

class ScopedTempDir {
 public:
  explicit ScopedTempDir(const std::string& name)
      : path_((std::filesystem::path(::testing::TempDir()) /
               ("troupe_" + name + "_" + std::to_string(::getpid())))
                  .string()) {
    Remove();  // a folder an earlier, killed run of this pid left
  }
  ~ScopedTempDir() { Remove(); }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  void Remove() const {
    std::error_code ignored;  // a destructor must not throw; a leftover is no test failure
    std::filesystem::remove_all(path_, ignored);
  }

  std::string path_;
};

}  // namespace troupe::test
