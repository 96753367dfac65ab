// Failure models (faults/failure_model.hpp, docs/faults.md "Failure models"): draws replay from
// the seed, their count matches rate x exposure, the Llama 3 preset's rates are its published
// counts over its exposure, a switch failure takes out its whole rack, and bad input names its
// field.
#include "faults/failure_model.hpp"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace troupe {
namespace {

config::Faults Block(const std::string& failure_model) {
  config::Faults faults;
  const std::string text = "failure_model { " + failure_model + " }";
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &faults)) << text;
  return faults;
}

FaultUniverse Servers(int64_t servers, int32_t gpus) {
  FaultUniverse u;
  u.servers = servers;
  u.gpus_of_server.assign(static_cast<size_t>(servers), gpus);
  return u;
}

FaultPlan Plan(const config::Faults& faults, uint64_t seed, const FaultUniverse& u) {
  FaultPlan plan;
  Status s = BuildFaultPlan(faults, seed, u, &plan);
  EXPECT_TRUE(s.ok()) << s.message();
  return plan;
}

std::vector<std::string> Described(const FaultPlan& plan) {
  std::vector<std::string> out;
  for (const FaultEvent& e : plan.events) out.push_back(e.Describe());
  return out;
}

const char* kSome =
    "component { component: \"gpu\" per_gpu_hour: 0.001 } "
    "component { component: \"host\" mtbf_h: 500 repair { distribution: \"lognormal\" "
    "mean_s: 7200 sigma: 1.5 } } end_s: 2592000";

TEST(FailureModel, TheSameSeedDrawsTheSameFailuresAndAnotherSeedOthers) {
  const FaultUniverse u = Servers(16, 8);
  const FaultPlan a = Plan(Block(kSome), 7, u);
  ASSERT_GT(a.events.size(), 10u);
  EXPECT_EQ(Described(a), Described(Plan(Block(kSome), 7, u)));
  EXPECT_NE(Described(a), Described(Plan(Block(kSome), 8, u)));
  EXPECT_NE(Described(a), Described(Plan(Block(std::string(kSome) + " seed: 99"), 7, u)));
  for (const FaultEvent& e : a.events) {
    EXPECT_EQ(e.kind, FaultKind::kCrash);
    EXPECT_EQ(e.target.kind, EndpointKind::kServer);
    EXPECT_GE(e.duration_s, 1) << "every failed server restarts after its repair";
    EXPECT_TRUE(e.cause == "failure:gpu" || e.cause == "failure:host") << e.cause;
  }
}

TEST(FailureModel, ChangingOneComponentLeavesTheOthersDrawsAlone) {
  const FaultUniverse u = Servers(16, 8);
  auto host_only = [](const FaultPlan& p) {
    std::vector<std::string> out;
    for (const FaultEvent& e : p.events)
      if (e.cause == "failure:host") out.push_back(e.Describe());
    return out;
  };
  const std::string other =
      "component { component: \"gpu\" per_gpu_hour: 0.003 } "
      "component { component: \"host\" mtbf_h: 500 repair { distribution: \"lognormal\" "
      "mean_s: 7200 sigma: 1.5 } } end_s: 2592000";
  EXPECT_EQ(host_only(Plan(Block(kSome), 7, u)), host_only(Plan(Block(other), 7, u)));
}

// 16 servers x 8 GPUs at 1e-4 per GPU-hour over 15,625 h: 128 x 1e-4 x 15625 = 200 expected.
// A Poisson count's sigma is sqrt(200) = 14.1; the bound is 5 sigma, for each of 20 seeds.
TEST(FailureModel, TheCountOverALongHorizonIsRateTimesExposure) {
  const FaultUniverse u = Servers(16, 8);
  const double expected = 128 * 1e-4 * 15625;
  const config::Faults block =
      Block("component { component: \"gpu\" per_gpu_hour: 1e-4 } end_s: 56250000");
  double total = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const double n = static_cast<double>(Plan(block, seed, u).events.size());
    EXPECT_NEAR(n, expected, 5 * std::sqrt(expected)) << "seed " << seed;
    total += n;
  }
  // The mean of 20 seeds: sigma sqrt(200 / 20).
  EXPECT_NEAR(total / 20, expected, 5 * std::sqrt(expected / 20));
}

TEST(FailureModel, MtbfAndPerServerRatesScaleByTheirUnits) {
  config::FailureComponent host;
  host.set_component("host");
  host.set_mtbf_h(1000);
  EXPECT_DOUBLE_EQ(FailuresPerHour(host, 8, 1), 1e-3) << "a host's MTBF is per server";
  config::FailureComponent gpu;
  gpu.set_component("gpu");
  gpu.set_mtbf_h(1000);
  EXPECT_DOUBLE_EQ(FailuresPerHour(gpu, 8, 1), 8e-3) << "a GPU's MTBF is per GPU";
  gpu.clear_mtbf_h();
  gpu.set_per_server_hour(2e-3);
  EXPECT_DOUBLE_EQ(FailuresPerHour(gpu, 8, 1), 2e-3);
}

TEST(FailureModel, Llama3PresetIsItsCountsOverItsExposure) {
  config::FailureModel preset;
  preset.set_preset("llama3");
  const config::FailureModel resolved = ResolveFailureModel(preset);
  std::map<std::string, int> counts;
  int total = 0;
  for (const PresetCause& c : Llama3Causes()) {
    counts[c.component] += c.count;
    total += c.count;
  }
  EXPECT_EQ(total, 419);
  ASSERT_EQ(resolved.component_size(), 5);
  double expected = 0;
  for (const config::FailureComponent& c : resolved.component()) {
    EXPECT_NEAR(c.per_gpu_hour(), counts[c.component()] / (16384.0 * 1296), 1e-12) << c.component();
    // 2,048 servers of 8 GPUs for 1,296 hours, one server per "switch" group.
    expected += 2048 * FailuresPerHour(c, 8, 1) * 1296;
  }
  EXPECT_NEAR(expected, 419, 1e-6);
  EXPECT_EQ(counts["gpu"], 196);
  EXPECT_EQ(counts["hbm"], 72);
  EXPECT_EQ(counts["host"], 102);
  EXPECT_EQ(counts["nic"], 14);
  EXPECT_EQ(counts["switch"], 35);
}

TEST(FailureModel, AComponentBesideAPresetReplacesThePresetsOwn) {
  const config::Faults block =
      Block("preset: \"llama3\" component { component: \"switch\" per_switch_hour: 0.5 }");
  const config::FailureModel resolved = ResolveFailureModel(block.failure_model());
  ASSERT_EQ(resolved.component_size(), 5);
  for (const config::FailureComponent& c : resolved.component()) {
    if (c.component() == "switch") {
      EXPECT_EQ(c.per_switch_hour(), 0.5);
    }
  }
}

// 8 servers in 2 racks of 4: every switch failure crashes the 4 servers of one rack at the same
// time with the same repair.
TEST(FailureModel, ASwitchFailureCrashesEveryServerOfItsRack) {
  FaultUniverse u = Servers(8, 8);
  u.rack_of_server = {0, 0, 0, 0, 1, 1, 1, 1};
  const FaultPlan plan =
      Plan(Block("component { component: \"switch\" per_switch_hour: 0.01 } end_s: 3600000"), 5, u);
  ASSERT_GE(plan.events.size(), 8u);
  std::map<std::pair<double, double>, std::vector<int64_t>> by_failure;
  for (const FaultEvent& e : plan.events) {
    EXPECT_EQ(e.cause, "failure:switch");
    by_failure[{e.at_s, e.duration_s}].push_back(e.target.first);
  }
  for (const auto& [failure, servers] : by_failure) {
    ASSERT_EQ(servers.size(), 4u) << "failure at " << failure.first;
    const int32_t rack = u.rack_of_server[static_cast<size_t>(servers[0])];
    for (int64_t s : servers) EXPECT_EQ(u.rack_of_server[static_cast<size_t>(s)], rack);
  }
  // Without a fabric a switch failure takes out one server.
  u.rack_of_server.clear();
  const FaultPlan alone =
      Plan(Block("component { component: \"switch\" per_switch_hour: 0.01 } end_s: 3600000"), 5, u);
  std::map<std::pair<double, double>, int> per_failure;
  for (const FaultEvent& e : alone.events) ++per_failure[{e.at_s, e.duration_s}];
  ASSERT_FALSE(per_failure.empty());
  for (const auto& [failure, servers] : per_failure) EXPECT_EQ(servers, 1);
}

std::string Refusal(const std::string& failure_model) {
  FaultPlan plan;
  Status s = BuildFaultPlan(Block(failure_model), 1, Servers(4, 8), &plan);
  EXPECT_FALSE(s.ok()) << failure_model;
  EXPECT_TRUE(plan.events.empty());
  return s.message();
}

TEST(FailureModel, BadInputNamesTheField) {
  // The range check's own message (config/config_ranges.hpp), as in every other field.
  EXPECT_EQ(Refusal("component { component: \"gpu\" per_gpu_hour: -0.1 }"),
            "faults: failure_model.component[0].per_gpu_hour: must be in [0, 1], got -0.1");
  EXPECT_EQ(Refusal("preset: \"llama4\""),
            "faults.failure_model.preset: unknown preset 'llama4' (llama3)");
  EXPECT_EQ(Refusal("component { component: \"gpu\" per_gpu_hour: 1e-5 } "
                    "component { component: \"nic\" }"),
            "faults.failure_model.component[1]: nic needs a rate: per_gpu_hour, "
            "per_server_hour, per_switch_hour or mtbf_h");
  EXPECT_EQ(Refusal("component { component: \"fan\" mtbf_h: 10 }"),
            "faults.failure_model.component[0].component: unknown component 'fan' (gpu, hbm, "
            "host, nic, switch)");
  EXPECT_EQ(Refusal("component { component: \"gpu\" per_gpu_hour: 1e-5 mtbf_h: 10 }"),
            "faults.failure_model.component[0]: gpu has 2 rates; give one");
  EXPECT_EQ(Refusal("component { component: \"gpu\" per_switch_hour: 1e-5 }"),
            "faults.failure_model.component[0].per_switch_hour: only a switch fails per "
            "switch-hour");
  EXPECT_EQ(Refusal("component { component: \"gpu\" mtbf_h: 0 }"),
            "faults.failure_model.component[0].mtbf_h: must be > 0");
  EXPECT_EQ(Refusal("repair { distribution: \"weibull\" }"),
            "faults.failure_model.repair.distribution: unknown distribution 'weibull' "
            "(exponential, lognormal)");
  EXPECT_EQ(Refusal("start_s: 100 end_s: 100"),
            "faults.failure_model.end_s: must be after start_s");
}

}  // namespace
}  // namespace troupe
