// Two processes: a `troupe node` started by the test hosts half of the servers; `troupe run`
// places them there through CAF's middleman (loopback). The run completes with the same JCTs as
// the one-process real-mode run, within 2%.
#include <gtest/gtest.h>

#include <map>

#include "tests/integration/node_process.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kCluster[] =
    "cluster { servers { count: 4 gpus: 8 cpus: 24 memory_gb: 500 } }\n"
    "workload { generator { jobs_per_hour: 30 num_jobs: 60 multi_gpu: true } }\n"
    "run { mode: real time_scale: 300000 seed: 5 }\n";

std::map<int64_t, double> JctsOf(const std::string& jobs_csv) {
  std::map<int64_t, double> jct;
  for (auto& row : ReadCsv(jobs_csv)) jct[std::stoll(row["job_id"])] = std::stod(row["jct_s"]);
  return jct;
}

TEST(TwoProcesses, HalfTheServersOnANodeGiveTheSameJcts) {
  const std::string dir = FreshDir("two-proc");
  NodeProcess node(dir);
  const std::string address = node.WaitForAddress();
  ASSERT_FALSE(address.empty()) << "troupe node did not start: " << ReadFile(dir + "/node.err");

  WriteFile(dir + "/local.textproto", kCluster);
  WriteFile(dir + "/placed.textproto", std::string(kCluster) + "placement { node: \"" + address +
                                           "\" first_server: 2 last_server: 3 }\n");
  ProcessResult local = RunTroupe({"run", dir + "/local.textproto", "--out", dir + "/local"});
  ASSERT_EQ(local.exit_code, 0) << local.err;
  ProcessResult placed = RunTroupe({"run", dir + "/placed.textproto", "--out", dir + "/placed"});
  ASSERT_EQ(placed.exit_code, 0) << placed.err;

  const std::map<int64_t, double> one = JctsOf(dir + "/local/jobs.csv");
  const std::map<int64_t, double> two = JctsOf(dir + "/placed/jobs.csv");
  ASSERT_EQ(one.size(), 60u);
  ASSERT_EQ(two.size(), 60u);
  for (const auto& [id, jct] : one) {
    ASSERT_GE(jct, 0) << "job " << id << " did not finish";
    EXPECT_NEAR(two.at(id), jct, 0.02 * jct) << "job " << id;
  }
  // The servers really lived in the node process: it logged hosting them.
  const std::string node_log = ReadFile(dir + "/node.err") + ReadFile(dir + "/node.out");
  EXPECT_NE(node_log.find("hosting server"), std::string::npos) << node_log;
}

}  // namespace
}  // namespace troupe::testing
