// Validation of RunConfig.agents (config/config_validation.cpp, docs/config.md#agents-job-agents).
#include <gtest/gtest.h>

#include "base/status_macros.hpp"
#include "config/config_loader.hpp"
#include "config/config_validation.hpp"

namespace troupe {
namespace {

constexpr char kBase[] =
    "cluster { servers { count: 1 gpus: 4 cpus: 24 memory_gb: 500 } }\n"
    "workload { generator { num_jobs: 1 } }\n";

Status Check(const std::string& run, const std::string& agents) {
  config::RunConfig cfg;
  RETURN_IF_ERROR(ParseConfigText(std::string(kBase) + run + "agents { " + agents + " }\n",
                                  "a.textproto", &cfg));
  return ValidateConfig(cfg, "a.textproto");
}

TEST(AgentConfigTest, DefaultsWithASecretInRealModeAreValid) {
  EXPECT_TRUE(Check("run { mode: real }\n", "secret: \"x\"").ok());
  EXPECT_TRUE(Check("run { mode: real }\n", "secret_file: \"/etc/troupe-secret\"").ok());
  config::RunConfig cfg;
  ASSERT_TRUE(ParseConfigText("agents { }", "d", &cfg).ok());
  EXPECT_EQ(cfg.agents().listen(), "127.0.0.1:0");  // loopback unless said otherwise
  EXPECT_EQ(cfg.agents().max_frame_bytes(), 1 << 20);
}

TEST(AgentConfigTest, EachRuleNamesItsField) {
  auto message = [](const std::string& run, const std::string& agents) {
    Status s = Check(run, agents);
    EXPECT_FALSE(s.ok()) << agents;
    return s.message();
  };
  const std::string real = "run { mode: real }\n";
  EXPECT_NE(message("", "secret: \"x\"")
                .find("a.textproto: agents: agents train on the wall "
                      "clock: set run.mode to real"),
            std::string::npos);
  EXPECT_NE(message(real, "").find("agents.secret: a shared secret"), std::string::npos);
  EXPECT_NE(message(real, "secret: \"x\" secret_file: \"f\"").find("agents.secret_file"),
            std::string::npos);
  EXPECT_NE(message(real, "secret: \"x\" listen: \"4242\"").find("agents.listen"),
            std::string::npos);
  EXPECT_NE(message(real, "secret: \"x\" heartbeat_s: 5 read_timeout_s: 5")
                .find("agents.heartbeat_s: must be shorter than agents.read_timeout_s"),
            std::string::npos);
  EXPECT_NE(message(real, "secret: \"x\" max_connections: 0").find("agents.max_connections"),
            std::string::npos);
  EXPECT_NE(message(real, "secret: \"x\" max_frame_bytes: 10").find("agents.max_frame_bytes"),
            std::string::npos);
  EXPECT_NE(message(real, "secret: \"x\" expected_jobs: -1").find("agents.expected_jobs"),
            std::string::npos);
}

}  // namespace
}  // namespace troupe
