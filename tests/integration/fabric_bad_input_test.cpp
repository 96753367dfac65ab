// A fabric that cannot be built is an answer, not a run: `troupe run` and `troupe validate` both
// print one line on stderr naming the field, exit with status 2, and `run` writes nothing to its
// --out folder. The cases of the issue: a server in no rack, a link of zero or negative capacity,
// a rack under no spine, a model without a gradient size.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

// Four servers of 4 GPUs and a workload that would run; each case appends its fabric.
constexpr char kCluster[] =
    "cluster { servers { count: 4 gpus: 4 cpus: 12 memory_gb: 250 } }\n"
    "workload { generator { num_jobs: 4 multi_gpu: true } ";

class FabricBadInput : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshDir("fabric-bad"); }

  // Writes `workload_tail` + `fabric` after kCluster, runs and validates it, checks the contract
  // for both and that the line names `field`.
  void ExpectRefused(const std::string& fabric, const std::string& field,
                     const std::string& workload_tail = "",
                     const std::vector<std::string>& extra = {}) {
    const std::string config = dir_ + "/config.textproto";
    WriteFile(config, std::string(kCluster) + workload_tail + "}\n" + fabric + "\n");
    const std::string out = dir_ + "/out";
    for (const char* command : {"run", "validate"}) {
      SCOPED_TRACE(command);
      std::vector<std::string> args = {command, config};
      if (command == std::string("run")) args.insert(args.end(), {"--out", out});
      args.insert(args.end(), extra.begin(), extra.end());
      ProcessResult r = RunTroupe(args);
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_EQ(r.err.rfind("troupe: ", 0), 0u) << r.err;
      EXPECT_NE(r.err.find(field), std::string::npos) << "expected " << field << " in " << r.err;
      EXPECT_FALSE(fs::exists(out)) << "bad input left a run directory";
    }
  }

  std::string dir_;
};

// The well-formed form of the cases below: they fail for what they change, not for their form.
TEST_F(FabricBadInput, ExplicitRacksAndSpinesRunAndValidate) {
  const std::string config = dir_ + "/config.textproto";
  WriteFile(config, std::string(kCluster) +
                        "}\nfabric { rack { first_server: 0 last_server: 1 spine: \"a\" } "
                        "rack { first_server: 2 last_server: 3 spine: \"b\" } "
                        "spine { name: \"a\" } spine { name: \"b\" } }\n");
  EXPECT_EQ(RunTroupe({"validate", config}).exit_code, 0);
  ProcessResult r = RunTroupe({"run", config, "--out", dir_ + "/out", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ + "/out/links.csv"));
}

TEST_F(FabricBadInput, AServerInNoRack) {
  ExpectRefused(
      "fabric { rack { first_server: 0 last_server: 1 } rack { first_server: 3 last_server: 3 } }",
      "fabric.rack: server 2 is in no rack");
}

TEST_F(FabricBadInput, ARackPastTheCluster) {
  ExpectRefused(
      "fabric { rack { first_server: 0 last_server: 1 } rack { first_server: 2 last_server: 4 } }",
      "fabric.rack[1].last_server");
}

TEST_F(FabricBadInput, LinksOfZeroOrNegativeCapacity) {
  ExpectRefused(
      "fabric { rack { first_server: 0 last_server: 1 uplink_gbps: 0 } "
      "rack { first_server: 2 last_server: 3 } }",
      "fabric.rack[0].uplink_gbps");
  ExpectRefused("fabric { tor_uplink_gbps: 0 }", "fabric.tor_uplink_gbps");
  ExpectRefused("fabric { tor_uplink_gbps: -1 }", "fabric.tor_uplink_gbps");
  ExpectRefused("fabric { server_nic_gbps: 0 }", "fabric.server_nic_gbps");
  ExpectRefused("fabric { server_nic_gbps: -100 }", "fabric.server_nic_gbps");
  ExpectRefused("fabric { intra_server_gbps: 0 }", "fabric.intra_server_gbps");
  ExpectRefused("fabric { servers_per_rack: 1 racks_per_spine: 2 spine_uplink_gbps: 0 }",
                "fabric.spine_uplink_gbps");
  // A --set names itself.
  ExpectRefused("fabric { }", "fabric.server_nic_gbps", "", {"--set", "fabric.server_nic_gbps=0"});
}

TEST_F(FabricBadInput, ARackUnderNoSpine) {
  ExpectRefused(
      "fabric { rack { first_server: 0 last_server: 1 spine: \"a\" } "
      "rack { first_server: 2 last_server: 3 } spine { name: \"a\" } }",
      "fabric.rack[1].spine");
  ExpectRefused(
      "fabric { rack { first_server: 0 last_server: 1 spine: \"a\" } "
      "rack { first_server: 2 last_server: 3 spine: \"c\" } spine { name: \"a\" } }",
      "fabric.rack[1].spine: no spine is named 'c'");
}

// The shipped catalogue less its gradient_mb and comm_overlap columns, in a folder of its own:
// fine without a fabric, refused with one.
TEST_F(FabricBadInput, AModelWithoutAGradientSize) {
  const std::string models = dir_ + "/models";
  fs::create_directories(models);
  fs::copy_file(SourcePath("configs/models/synergy_sensitivity.csv"),
                models + "/synergy_sensitivity.csv");
  std::ifstream in(SourcePath("configs/models/synergy_models.csv"));
  std::ofstream copy(models + "/synergy_models.csv");
  std::string line;
  while (std::getline(in, line)) {
    // gradient_mb and comm_overlap are the last two columns.
    for (int column = 0; column < 2; ++column) line.erase(line.rfind(','));
    copy << line << "\n";
  }
  copy.close();
  ASSERT_EQ(ReadFile(models + "/synergy_models.csv").find("gradient_mb"), std::string::npos);
  const std::string tail = "models_dir: \"" + models + "\" ";

  const std::string config = dir_ + "/no-fabric.textproto";
  WriteFile(config, std::string(kCluster) + tail + "}\n");
  ProcessResult r = RunTroupe({"run", config, "--out", dir_ + "/no-fabric", "--quiet"});
  EXPECT_EQ(r.exit_code, 0) << "the catalogue is fine without a fabric: " << r.err;

  ExpectRefused("fabric { servers_per_rack: 2 }", "gradient_mb", tail);
}

// A real run's fabric actor shares its links fairly: GPU-intensity priority, which only the
// emulated rounds apply, is refused there rather than ignored.
TEST_F(FabricBadInput, LinkPriorityInARealRun) {
  ExpectRefused(
      "fabric { servers_per_rack: 2 link_priority: gpu_intensity }\n"
      "run { mode: real time_scale: 1000000 }\n"
      "backends { compute: \"cpu\" }",
      "fabric.link_priority");
}

}  // namespace
}  // namespace troupe::testing
