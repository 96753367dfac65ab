// A run under a failure model (docs/faults.md, "Failure models"): the drawn failures crash and
// restart servers, and the run still ends with every job finished or failed with a reason
// (faults/run_invariants.hpp). With a fabric, a switch failure in the planned run takes out
// every server of its rack.
#include <gtest/gtest.h>

#include <map>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "faults/failure_model.hpp"
#include "runner/cluster/run_setup.hpp"
#include "tests/integration/fault_fixture.hpp"

namespace troupe::testing {
namespace {

// 4 servers x 4 GPUs: 16 x 0.02 + 4 / 50 = 0.4 failures an hour over the run's first 20 hours.
const char* kFailureModel =
    "faults { failure_model { component { component: \"gpu\" per_gpu_hour: 0.02 } "
    "component { component: \"host\" mtbf_h: 50 } end_s: 72000 "
    "repair { distribution: \"lognormal\" mean_s: 1800 sigma: 1 } } }\n";

FaultPlan DrawnPlan(const std::string& text) {
  config::RunConfig cfg;
  EXPECT_TRUE(ParseConfigText(text, "test.textproto", &cfg).ok());
  FaultUniverse universe{4, 60, 0, {}};
  universe.gpus_of_server.assign(4, 4);
  FaultPlan plan;
  Status s = BuildFaultPlan(cfg.faults(), 3, universe, &plan);
  EXPECT_TRUE(s.ok()) << s.message();
  return plan;
}

TEST(FailureModelRun, EveryJobEndsUnderDrawnFailures) {
  const std::string text = FaultTestConfig() + kFailureModel;
  const FaultPlan plan = DrawnPlan(text);
  ASSERT_GE(plan.events.size(), 2u) << "the seed draws failures inside the run";
  RunResult r = RunConfigText(text);
  const InvariantReport report = CheckFaultRun(r, plan);
  EXPECT_EQ(report.jobs_finished + report.jobs_failed, 60);
  EXPECT_EQ(r.summary.end_reason(), "all jobs finished");
  int drawn = 0;
  for (const FaultRecord& f : r.faults) drawn += f.fault.find("(failure:") != std::string::npos;
  EXPECT_GT(drawn, 0) << "the drawn failures reached the servers";
  EXPECT_GT(r.summary.wasted_gpu_hours(), 0) << "a failure mid-lease loses its work";
}

TEST(FailureModelRun, ASwitchFailureInAFabricTakesOutItsRack) {
  const std::string text =
      FaultTestConfig() +
      "fabric { servers_per_rack: 2 }\n"
      "faults { failure_model { component { component: \"switch\" per_switch_hour: 0.05 } "
      "end_s: 360000 } }\n";
  config::RunConfig cfg;
  ASSERT_TRUE(ParseConfigText(text, "test.textproto", &cfg).ok());
  ASSERT_TRUE(ValidateConfig(cfg, "test.textproto").ok());
  RunPlan plan;
  Status s = PlanRun(cfg, "test.textproto", &plan);
  ASSERT_TRUE(s.ok()) << s.message();
  std::map<std::pair<double, double>, std::vector<int64_t>> by_failure;
  for (const FaultEvent& e : plan.faults.events) {
    by_failure[{e.at_s, e.duration_s}].push_back(e.target.first);
  }
  ASSERT_GE(by_failure.size(), 3u);
  for (const auto& [failure, servers] : by_failure) {
    ASSERT_EQ(servers.size(), 2u) << "failure at " << failure.first;
    EXPECT_EQ(servers[0] / 2, servers[1] / 2) << "both servers of one rack";
  }
}

}  // namespace
}  // namespace troupe::testing
