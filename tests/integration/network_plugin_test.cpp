// The network is a plugin (network/network_plugin.hpp): CAF's middleman and OpenSSL are mapped by
// the runs that reach other processes and by no other, and such a run without the plugin is
// refused while it is planned, in one line, with nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr const char* kNetworkLibraries[] = {"libcaf_io", "libcaf_openssl", "libssl", "libcrypto",
                                             "troupe_network"};

// Servers 2-3 on a node at a loopback address (validate plans the run; it connects to nothing).
std::string PlacedConfig(const std::string& dir) {
  const std::string path = dir + "/placed.textproto";
  WriteFile(path,
            "cluster { servers { count: 4 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
            "workload { generator { jobs_per_hour: 30 num_jobs: 12 } }\n"
            "run { mode: real time_scale: 300000 seed: 5 }\n"
            "placement { node: \"127.0.0.1:1\" first_server: 2 last_server: 3 }\n");
  return path;
}

// The dynamic loader lists every object it maps under LD_DEBUG=files (on stderr).
TEST(NetworkPlugin, VersionValidateAndAnEmulatedRunMapNoNetworkLibrary) {
  const std::string dir = FreshDir("network-plugin-none");
  ScopedEnv debug("LD_DEBUG", "files");
  const std::vector<std::vector<std::string>> commands = {
      {"--version"},
      {"validate", SourcePath("configs/default.textproto")},
      {"run", SourcePath("configs/default.textproto"), "--quiet", "--out", dir + "/run"},
  };
  for (const std::vector<std::string>& args : commands) {
    const ProcessResult r = RunTroupe(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << "\n" << r.err.substr(0, 2000);
    ASSERT_NE(r.err.find("file=libcaf_core"), std::string::npos) << "LD_DEBUG listed nothing";
    for (const char* library : kNetworkLibraries) {
      EXPECT_EQ(r.err.find(library), std::string::npos) << args[0] << " mapped " << library;
    }
  }
}

TEST(NetworkPlugin, ARunWithNodesLoadsItWhilePlanned) {
  const std::string dir = FreshDir("network-plugin-nodes");
  ScopedEnv debug("LD_DEBUG", "files");
  const ProcessResult r = RunTroupe({"validate", PlacedConfig(dir)});
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  for (const char* library : {"troupe_network.so", "libcaf_io"}) {
    EXPECT_NE(r.err.find(library), std::string::npos) << "validate did not map " << library;
  }
}

TEST(NetworkPlugin, WithoutItARunWithNodesIsOneLineAndWritesNothing) {
  const std::string dir = FreshDir("network-plugin-missing");
  ScopedEnv missing("TROUPE_NETWORK_PLUGIN", dir + "/absent/troupe_network.so");
  const std::string config = PlacedConfig(dir);
  const std::string out = dir + "/run";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"validate", config},
        std::vector<std::string>{"run", config, "--quiet", "--out", out},
        std::vector<std::string>{"node", "--listen", "127.0.0.1:0"}}) {
    const ProcessResult r = RunTroupe(args);
    EXPECT_NE(r.exit_code, 0) << args[0];
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_NE(r.err.find("network plugin: " + dir + "/absent/troupe_network.so"), std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace troupe::testing
