// Loading the network plugin (network/network_plugin.hpp): what a failed load says, where the
// plugin is looked for, and that this build's plugin loads and answers.
#include "network/network_plugin.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/scoped_env.hpp"

namespace troupe {
namespace {

void ExpectOneLine(const Status& s) {
  EXPECT_EQ(s.code(), Status::Code::kInternal) << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  EXPECT_EQ(s.message().rfind("network plugin: ", 0), 0u) << s.message();
}

TEST(NetworkPluginLoad, AMissingPluginSaysWhatDlopenSaid) {
  const NetworkTable* table = nullptr;
  const Status s = LoadNetworkFrom("/nonexistent/troupe_network.so", &table);
  ExpectOneLine(s);
  EXPECT_NE(s.message().find("/nonexistent/troupe_network.so: cannot open shared object file"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(table, nullptr);
}

TEST(NetworkPluginLoad, ALibraryWithoutTheEntryPointIsRefused) {
  const NetworkTable* table = nullptr;
  const Status s = LoadNetworkFrom("libm.so.6", &table);
  ExpectOneLine(s);
  EXPECT_NE(s.message().find("no entry point troupe_network"), std::string::npos) << s.message();
  EXPECT_EQ(table, nullptr);
}

TEST(NetworkPluginLoad, TheVariableChoosesThePlugin) {
  {
    testing::ScopedEnv chosen(kNetworkVariable, "/opt/elsewhere/net.so");
    EXPECT_EQ(NetworkPluginPath(), "/opt/elsewhere/net.so");
  }
  testing::ScopedEnv unset(kNetworkVariable, std::nullopt);
  const std::string path = NetworkPluginPath();
  EXPECT_EQ(path.substr(path.size() - std::string("/troupe_network.so").size()),
            "/troupe_network.so")
      << path;
}

TEST(NetworkPluginLoad, ThisBuildsPluginLoadsAndAnswers) {
  const NetworkTable* table = nullptr;
  const Status s = LoadNetworkFrom(NetworkPluginPath(), &table);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->header.abi_version, kNetworkAbi);
  std::string a, b;
  ASSERT_TRUE(table->random_bytes(32, &a).ok());
  ASSERT_TRUE(table->random_bytes(32, &b).ok());
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_TRUE(table->equal_in_constant_time("token", "token"));
  EXPECT_FALSE(table->equal_in_constant_time("token", "tokem"));
  EXPECT_FALSE(table->equal_in_constant_time("token", "toke"));
  const Status refused = table->check_credentials("/nonexistent/ca.pem", "/nonexistent/cert.pem",
                                                  "/nonexistent/key.pem", "--credentials");
  EXPECT_EQ(refused.message().rfind("--credentials: /nonexistent/ca.pem: ", 0), 0u)
      << refused.message();
}

}  // namespace
}  // namespace troupe
