// Validation of RunConfig.external_scheduler (config/config_validation.cpp,
// docs/config.md#external_scheduler-rounds-placed-by-a-process-outside-troupe): the block and
// scheduler.mechanism_name "external" go together, and each bad field is one line naming it.
#include <gtest/gtest.h>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"

namespace troupe {
namespace {

constexpr char kBase[] =
    "cluster { servers { count: 1 gpus: 4 cpus: 24 memory_gb: 500 } }\n"
    "workload { generator { num_jobs: 1 } }\n";

// The validation's message ("" when valid).
std::string Check(const std::string& scheduler, const std::string& block) {
  config::RunConfig cfg;
  const std::string text = std::string(kBase) + "scheduler { " + scheduler + " }\n" + block;
  Status s = ParseConfigText(text, "e.textproto", &cfg);
  if (s.ok()) s = ValidateConfig(cfg, "e.textproto");
  return s.message();
}

constexpr char kExternal[] = "mechanism_name: \"external\"";

TEST(ExternalConfig, SelectedAndConfiguredTogetherIsValid) {
  EXPECT_EQ(Check(kExternal, "external_scheduler { secret: \"x\" }"), "");
  EXPECT_EQ(Check(kExternal, "external_scheduler { secret_file: \"s\" fallback: \"tune\" }"), "");
  config::RunConfig cfg;
  ASSERT_TRUE(ParseConfigText("external_scheduler { }", "d", &cfg).ok());
  EXPECT_EQ(cfg.external_scheduler().listen(), "127.0.0.1:0");  // loopback unless said otherwise
  EXPECT_EQ(cfg.external_scheduler().fallback(), "proportional");
}

TEST(ExternalConfig, EachRuleNamesItsField) {
  EXPECT_EQ(Check(kExternal, ""),
            "e.textproto: scheduler.mechanism_name: 'external' needs an external_scheduler "
            "block (docs/external-scheduler.md)");
  EXPECT_EQ(Check("mechanism: tune", "external_scheduler { secret: \"x\" }"),
            "e.textproto: external_scheduler: set, but scheduler.mechanism_name is not "
            "'external'");
  EXPECT_EQ(Check(kExternal, "external_scheduler { }"),
            "e.textproto: external_scheduler.secret: give external_scheduler.secret or "
            "external_scheduler.secret_file (one of them)");
  EXPECT_NE(Check(kExternal, "external_scheduler { secret: \"x\" secret_file: \"f\" }")
                .find("external_scheduler.secret:"),
            std::string::npos);
  EXPECT_EQ(Check(kExternal, "external_scheduler { secret: \"x\" listen: \"4242\" }"),
            "e.textproto: external_scheduler.listen: must be HOST:PORT, got '4242'");
  EXPECT_EQ(Check(kExternal, "external_scheduler { secret: \"x\" fallback: \"external\" }"),
            "e.textproto: external_scheduler.fallback: must be a mechanism troupe runs itself, "
            "not external");
  EXPECT_NE(Check(kExternal, "external_scheduler { secret: \"x\" fallback: \"fifo\" }")
                .find("external_scheduler.fallback: 'fifo' is not a registered mechanism"),
            std::string::npos);
  EXPECT_NE(Check(kExternal, "external_scheduler { secret: \"x\" answer_timeout_s: 0 }")
                .find("external_scheduler.answer_timeout_s"),
            std::string::npos);
}

}  // namespace
}  // namespace troupe
