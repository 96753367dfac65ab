// fabric.placement rule interleave end to end (docs/network.md, "Interleaving"): the troupe binary
// on a hand-made trace in which two jobs share a server's NIC. Aligned (the other rules start
// every job at 0) their bursts collide every iteration; interleaved, the second is shifted into
// the first's compute. Runs are deterministic, and the rule needs the phased traffic model.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// 4 servers of 4 GPUs in one rack, 25 Gb/s NICs. Three 5-GPU GNMT jobs: 0 on servers 0 (4) and
// 1 (1), 1 on servers 2 (4) and 3 (1), 2 on servers 1 (3) and 3 (2) — it shares server 1's NIC
// with job 0 and server 3's with job 1. Each GNMT burst (half its 643 MB exposed at 25 Gb/s,
// about 0.1 s) fits in another's 0.12 s of compute.
constexpr char kTrace[] =
    "job_id,model,arrival_s,iterations,gpus\n"
    "0,gnmt,0,20000,5\n"
    "1,gnmt,0,20000,5\n"
    "2,gnmt,0,20000,5\n";

std::string Config(const std::string& fabric) {
  return "cluster { servers { count: 4 gpus: 4 cpus: 12 memory_gb: 250 } }\n"
         "workload { trace_file: \"trace.csv\" }\n"
         "fabric { servers_per_rack: 4 server_nic_gbps: 25 " +
         fabric +
         " }\n"
         "scheduler { policy: fifo mechanism: proportional round_s: 300 }\n"
         "run { mode: emulated seed: 1 }\n";
}

double ContentionSeconds(const std::string& run_dir) {
  double total = 0;
  for (const auto& row : ReadCsv(run_dir + "/jobs.csv")) total += std::stod(row.at("contention_s"));
  return total;
}

class FabricInterleaveRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("fabric-interleave-run");
    WriteFile(dir_ + "/trace.csv", kTrace);
  }

  ProcessResult Run(const std::string& name, const std::string& fabric) {
    WriteFile(dir_ + "/" + name + ".textproto", Config(fabric));
    return RunTroupe(
        {"run", dir_ + "/" + name + ".textproto", "--out", dir_ + "/" + name, "--quiet"});
  }

  std::string dir_;
};

TEST_F(FabricInterleaveRun, ShiftedBurstsContendLessThanAlignedOnesAndRunTheSameTwice) {
  for (const std::string name : {"oblivious", "interleave", "interleave-again"}) {
    const std::string rule = name == "oblivious" ? "oblivious" : "interleave";
    const ProcessResult r = Run(name, "traffic: phased placement { rule: " + rule + " }");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const double aligned = ContentionSeconds(dir_ + "/oblivious");
  const double interleaved = ContentionSeconds(dir_ + "/interleave");
  EXPECT_GT(aligned, 60) << "the aligned bursts should contend";
  EXPECT_LT(interleaved, 0.25 * aligned);
  for (const char* file : {"/jobs.csv", "/rounds.csv", "/links.csv"}) {
    EXPECT_TRUE(ReadFile(dir_ + "/interleave" + file) ==
                ReadFile(dir_ + "/interleave-again" + file))
        << file << " differs between two runs";
  }
}

// Interleaving lines up bursts, which the fluid model does not have: refused before anything runs.
TEST_F(FabricInterleaveRun, InterleaveWithoutPhasedTrafficIsBadInput) {
  const ProcessResult r = Run("fluid", "traffic: fluid placement { rule: interleave }");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fabric.placement.rule"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/fluid"));
  const ProcessResult candidates = Run("candidates", "placement { candidates: 4 }");
  EXPECT_EQ(candidates.exit_code, 2);
  EXPECT_NE(candidates.err.find("fabric.placement.candidates"), std::string::npos)
      << candidates.err;
}

}  // namespace
}  // namespace troupe::testing
