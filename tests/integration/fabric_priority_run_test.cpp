// fabric.link_priority end to end (docs/network.md, "Link priority"): two 12-GPU jobs on three
// 8-GPU servers meet on a server's NIC; under gpu_intensity the GPU-intensive one (alexnet: 0.6 s
// of compute a 245 MB gradient) loses less to the other than under fair, and the light one (GNMT:
// 0.12 s a 643 MB gradient) more; the same config twice gives the same bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kTrace[] =
    "job_id,model,arrival_s,iterations,gpus\n"
    "0,alexnet,0,30000,12\n"
    "1,gnmt,0,30000,12\n";

std::string Config(const std::string& trace) {
  return "cluster { servers { count: 3 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
         "workload { trace_file: \"" +
         trace +
         "\" }\n"
         "fabric { servers_per_rack: 3 server_nic_gbps: 10 tor_oversubscription: 1 }\n"
         "scheduler { policy: fifo mechanism: proportional round_s: 300 }\n"
         "run { mode: emulated seed: 1 }\n";
}

// Each job's contention seconds, by job id.
std::map<std::string, double> Contention(const std::string& run_dir) {
  std::map<std::string, double> by_job;
  for (const auto& row : ReadCsv(run_dir + "/jobs.csv")) {
    by_job[row.at("job_id")] = std::stod(row.at("contention_s"));
  }
  return by_job;
}

class FabricPriorityRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("fabric-priority-run");
    WriteFile(dir_ + "/trace.csv", kTrace);
    config_ = dir_ + "/two-jobs.textproto";
    WriteFile(config_, Config(dir_ + "/trace.csv"));
  }

  void Run(const std::string& out, const std::string& priority) {
    ProcessResult r = RunTroupe(
        {"run", config_, "--out", out, "--quiet", "--set", "fabric.link_priority=" + priority});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  std::string dir_, config_;
};

TEST_F(FabricPriorityRun, TheIntensiveJobContendsLessThanUnderFairAndTwiceGivesTheSameBytes) {
  const std::string fair = dir_ + "/fair", a = dir_ + "/a", b = dir_ + "/b";
  Run(fair, "fair");
  Run(a, "gpu_intensity");
  Run(b, "gpu_intensity");
  for (const char* file : {"/jobs.csv", "/rounds.csv", "/links.csv"}) {
    EXPECT_TRUE(ReadFile(a + file) == ReadFile(b + file)) << file << " differs between two runs";
  }
  const std::map<std::string, double> even = Contention(fair), ranked = Contention(a);
  ASSERT_EQ(even.size(), 2u);
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_GT(even.at("0"), 0) << "under fair the jobs should contend";
  EXPECT_LT(ranked.at("0"), even.at("0")) << "alexnet, the intensive job";
  EXPECT_GT(ranked.at("1"), even.at("1")) << "GNMT gives way";
}

}  // namespace
}  // namespace troupe::testing
