// The OASiS run (actors/oasis/, docs/oasis.md) on the emulated clock.
//
// Contract checked here: every admitted OASiS job's emulated run (workers and PS exchanging one
// aggregated gradient and parameter message per chunk piece over the leased bandwidth) finishes by
// its planned end slot t-hat, and the actors' finish agrees with the model's worker-slot count (no
// violation); rejected jobs carry reasons; the actors lease, slot by slot, the workers and PS the
// slot simulator counts, and the emulated total utility equals its, for every policy (what the
// policies allocate is audited in tests/unit/oasis_audit_test.cpp); the run is deterministic
// (byte-identical jobs.csv and slots.csv); and configs/oasis.textproto validates. The actors can
// disagree with the simulator: with the PS machines' NICs slowed (oasis.ps_link_slowdown) jobs
// fall behind their plans, lose utility against the simulator, and jobs.csv says why.
#include "runner/oasis/oasis_run.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "scheduling/oasis/baselines.hpp"
#include "tests/integration/oasis_fixture.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

TEST(OasisRunTest, AdmittedJobsFinishByTheirPlannedEndAndRejectedOnesSayWhy) {
  const std::string dir = FreshDir("oasis-run");
  const OasisRunOut run = RunOasis({"run.out_dir=" + dir});
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  const summaries::OasisRunSummary& s = run.result.summary;
  EXPECT_TRUE(s.violations().empty()) << s.violations(0);
  EXPECT_GT(s.admitted(), 10);
  EXPECT_GT(s.rejected(), 0);
  EXPECT_EQ(s.late(), 0);
  EXPECT_GT(s.chunk_pieces(), 0);
  const auto jobs = ReadCsv(dir + "/jobs.csv");
  ASSERT_EQ(jobs.size(), run.plan.jobs.size());
  for (const auto& j : jobs) {
    if (j.at("admitted") == "1") {
      ASSERT_NE(j.at("actual_end"), "-1") << "job " << j.at("id");
      EXPECT_LE(std::stoi(j.at("actual_end")), std::stoi(j.at("planned_end"))) << j.at("id");
      EXPECT_TRUE(j.at("reason").empty());
    } else {
      EXPECT_FALSE(j.at("reason").empty()) << "job " << j.at("id");
      EXPECT_EQ(j.at("actual_end"), "-1");
    }
  }
  const std::string summary = ReadFile(dir + "/summary.json");
  EXPECT_NE(summary.find("\"total_utility\""), std::string::npos);
  EXPECT_NE(summary.find("\"admitted\": " + std::to_string(s.admitted())), std::string::npos);
}

TEST(OasisRunTest, EveryPolicyRespectsCapacitiesAndMatchesTheSimulator) {
  for (const char* policy : {"oasis", "fifo", "drf", "rrh", "dorm"}) {
    const std::string dir = FreshDir(std::string("oasis-") + policy);
    const OasisRunOut run = RunOasis({"run.out_dir=" + dir, std::string("oasis.policy=") + policy});
    ASSERT_TRUE(run.status.ok()) << run.status.message();
    EXPECT_TRUE(run.result.summary.violations().empty())
        << policy << ": " << run.result.summary.violations(0);
    // What a policy returns is audited against the machines' capacities before anything can
    // drop it in tests/unit/oasis_audit_test.cpp; here the actors must lease, slot by slot,
    // exactly the workers and PS the simulator counts for the same policy.
    auto sim_policy = scheduling::oasis::MakePolicy(policy, run.plan.cluster, run.plan.prices);
    const auto sim = scheduling::oasis::Simulate(run.plan.cluster, run.plan.jobs, *sim_policy);
    const auto slots = ReadCsv(dir + "/slots.csv");
    ASSERT_EQ(slots.size(), sim.slots.size());
    int leased = 0;
    for (size_t t = 0; t < slots.size(); ++t) {
      EXPECT_EQ(std::stoi(slots[t].at("workers")), sim.slots[t].workers) << policy << " " << t;
      EXPECT_EQ(std::stoi(slots[t].at("ps")), sim.slots[t].ps) << policy << " " << t;
      leased += std::stoi(slots[t].at("workers"));
    }
    EXPECT_GT(leased, 0) << policy;
    EXPECT_NEAR(run.result.summary.total_utility(), sim.total_utility, 1e-6) << policy;
    EXPECT_EQ(run.result.summary.finished(), sim.finished) << policy;
    EXPECT_EQ(run.result.summary.behind(), 0) << policy;
    EXPECT_EQ(run.result.summary.lost_utility(), 0) << policy;
  }
}

TEST(OasisRunTest, SlowPsLinksMakeJobsLateAndTheRunSaysWhy) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"oasis", "oasis.ps_link_slowdown=4"},
      {"fifo", "oasis.ps_link_slowdown=4"},
      {"oasis", "oasis.link_delay_s=1"}};
  for (const auto& [policy, knob] : cases) {
    const std::string dir = FreshDir("oasis-slow-" + policy + "-" + knob.substr(6, 6));
    const OasisRunOut run = RunOasis({"run.out_dir=" + dir, "oasis.policy=" + policy, knob});
    ASSERT_TRUE(run.status.ok()) << run.status.message();
    const summaries::OasisRunSummary& s = run.result.summary;
    EXPECT_TRUE(s.violations().empty()) << policy << ": " << s.violations(0);
    auto sim_policy = scheduling::oasis::MakePolicy(policy, run.plan.cluster, run.plan.prices);
    const auto sim = scheduling::oasis::Simulate(run.plan.cluster, run.plan.jobs, *sim_policy);
    EXPECT_NEAR(s.simulator_utility(), sim.total_utility, 1e-6) << policy;
    EXPECT_LT(s.total_utility(), sim.total_utility - 1) << policy;
    EXPECT_GE(s.behind(), 1) << policy;
    EXPECT_GT(s.lost_utility(), 0) << policy;
    int behind = 0;
    for (const OasisJobRow& j : run.result.records.jobs) {
      if (!j.behind) continue;
      ++behind;
      EXPECT_TRUE(j.admitted);
      EXPECT_NE(j.reason.find("behind its plan"), std::string::npos) << j.reason;
      EXPECT_TRUE(j.end_slot < 0 || j.end_slot > j.model_end) << "job " << j.id;
      EXPECT_LE(j.utility, j.model_utility) << "job " << j.id;  // a sigmoid may be flat there
    }
    EXPECT_EQ(behind, s.behind()) << policy;
    const auto jobs = ReadCsv(dir + "/jobs.csv");
    int said = 0;
    for (const auto& j : jobs) said += j.at("reason").find("behind its plan") != std::string::npos;
    EXPECT_EQ(said, s.behind()) << policy;
    EXPECT_NE(ReadFile(dir + "/summary.json").find("\"lost_utility\""), std::string::npos);
  }
}

TEST(OasisRunTest, EmulatedRunIsDeterministic) {
  // With the NICs slowed, who books a NIC first matters: that order must not vary either.
  for (const char* slowdown : {"1", "3"}) {
    const std::string a = FreshDir("oasis-a");
    const std::string b = FreshDir("oasis-b");
    const std::string knob = std::string("oasis.ps_link_slowdown=") + slowdown;
    ASSERT_TRUE(RunOasis({"run.out_dir=" + a, "run.seed=3", knob}).status.ok());
    ASSERT_TRUE(RunOasis({"run.out_dir=" + b, "run.seed=3", knob}).status.ok());
    EXPECT_EQ(ReadFile(a + "/jobs.csv"), ReadFile(b + "/jobs.csv")) << slowdown;
    EXPECT_EQ(ReadFile(a + "/slots.csv"), ReadFile(b + "/slots.csv")) << slowdown;
  }
}

// The actors take every time from the messages (when a slot's workers begin, when a transfer is
// ready), never from when the wall clock delivered them: a run on the wall clock a million times
// faster than real time writes the emulated run's files.
TEST(OasisRunTest, WallClockRunWritesTheEmulatedRunsFiles) {
  const std::string a = FreshDir("oasis-emulated");
  const std::string b = FreshDir("oasis-real");
  ASSERT_TRUE(RunOasis({"run.out_dir=" + a}).status.ok());
  const OasisRunOut real =
      RunOasis({"run.out_dir=" + b, "run.mode=real", "run.time_scale=1000000"});
  ASSERT_TRUE(real.status.ok()) << real.status.message();
  EXPECT_EQ(ReadFile(a + "/jobs.csv"), ReadFile(b + "/jobs.csv"));
  EXPECT_EQ(ReadFile(a + "/slots.csv"), ReadFile(b + "/slots.csv"));
}

TEST(OasisRunTest, RepositoryConfigValidatesAndBadFieldsAreNamed) {
  config::RunConfig cfg;
  ASSERT_TRUE(LoadConfigFile(SourcePath("configs/oasis.textproto"), &cfg).ok());
  EXPECT_TRUE(ValidateConfig(cfg, "oasis.textproto").ok());
  ASSERT_TRUE(ApplyOverride("oasis.policy=lottery", &cfg).ok());
  const Status bad = ValidateConfig(cfg, "oasis.textproto");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("oasis.policy"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace troupe::testing
