// The fabric in a real run (docs/network.md, "Real runs"): gangs whose parts run on several
// servers exchange their gradient every step through all-reduce ranks; with a fabric, every part
// and sum that crosses servers waits for the fabric actor to carry its bytes at its max-min share
// (actors/fabric_actor.hpp). The links are so slow (1 Mb/s) that the exchange is almost all of a
// step, so a job's measured seconds per iteration follow the fabric's arithmetic:
//   - a gang of two parts, each server in its own `troupe node` process, measures the ring's
//     2(N-1)/N * S / B, many times its time without a fabric;
//   - two gangs whose exchanges cross one rack uplink each measure about twice what one measures
//     alone on the same fabric.
// Rounds of 10^7 job seconds last 0.4 s of wall time, a dozen exchanges at that rate. The bounds
// are wide (0.8 to 3 times the figure) and every assertion compares a ratio, never a wall time.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "fabric/collective.hpp"
#include "gpu/real_progress.hpp"
#include "tests/integration/node_process.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr double kScale = 1e-7;
constexpr double kGradientMib = 39062.5;  // at kScale: 1024 floats a step
constexpr double kSlowGbps = 0.001;

// `servers` 1-GPU servers in real mode on the cpu backend; a job of 2 GPUs runs as a gang of two
// parts on two servers.
std::string RealCpu(int servers) {
  return "cluster { servers { count: " + std::to_string(servers) +
         " gpus: 1 cpus: 3 memory_gb: 62.5 } }\n"
         "scheduler { round_s: 10000000 }\n"
         "run { mode: real time_scale: 25000000 }\n"
         "backends { compute: 'cpu' reference_flops_per_s: 14e12 scale: 1e-7 width: 64 gemms: 2 "
         "gradient_mib: 39062.5 }\n";
}

// Each server i on the i-th node.
std::string Placements(const std::vector<std::string>& nodes) {
  std::string text;
  for (size_t i = 0; i < nodes.size(); ++i) {
    text += "placement { node: '" + nodes[i] + "' first_server: " + std::to_string(i) +
            " last_server: " + std::to_string(i) + " }\n";
  }
  return text;
}

// Runs `config` with `jobs` gangs of 2 GPUs and answers each job's median measured seconds per
// iteration over its leases.
std::map<int64_t, double> MedianSecondsPerIteration(const std::string& dir,
                                                    const std::string& config, int jobs) {
  std::string trace = "job_id,model,arrival_s,iterations,gpus\n";
  for (int j = 0; j < jobs; ++j) trace += std::to_string(j) + ",res50,0,45,2\n";
  WriteFile(dir + "/trace.csv", trace);
  config::RunConfig cfg;
  Status s = ParseConfigText(config + "workload { trace_file: '" + dir + "/trace.csv' }\n",
                             "pacing.textproto", &cfg);
  if (s.ok()) s = ValidateConfig(cfg, "pacing.textproto");
  cfg.mutable_run()->set_out_dir(dir + "/run");
  RunPlan plan;
  if (s.ok()) s = PlanRun(cfg, "pacing.textproto", &plan);
  auto log = std::make_shared<MeasuredLeaseLog>();
  plan.measured_leases = log;
  RunResult result;
  if (s.ok()) s = ExecuteRun(std::move(plan), ExecuteOptions{}, &result);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(result.summary.jobs_finished(), jobs);
  std::map<int64_t, std::vector<double>> seconds;
  for (const MeasuredLease& lease : log->Take()) {
    EXPECT_EQ(lease.parts.size(), 2u);
    for (const PartRecord& part : lease.parts) EXPECT_GE(part.exchanges, 1);
    if (lease.seconds_per_iteration > 0)
      seconds[lease.job_id].push_back(lease.seconds_per_iteration);
  }
  std::map<int64_t, double> median;
  for (auto& [job, all] : seconds) {
    std::sort(all.begin(), all.end());
    median[job] = all[all.size() / 2];
  }
  EXPECT_EQ(median.size(), static_cast<size_t>(jobs)) << "a job measured nothing";
  return median;
}

// Job seconds per iteration of an exchange at `bytes_per_s`: a step all-reduces 1025 floats (the
// gradient and the vote to stop) between two ranks, each sending half as parts and half as sums,
// both ways at once: the ring's 2(N-1)/N * S / B, over the scale.
double ExchangeSecondsPerIteration(double bytes_per_s) {
  const double floats =
      static_cast<double>(gpu::StepGradientFloats(kGradientMib * 1024 * 1024, kScale)) + 1;
  EXPECT_EQ(floats, 1025);
  return fabric::RingAllReduceSeconds(floats * 4, 2, bytes_per_s, 0) / kScale;
}

std::string Fabric(const std::string& fields) {
  return "fabric { " + fields + " nic_latency_us: 0 tor_latency_us: 0 spine_latency_us: 0 }\n";
}

// Two servers, each on its own node, NICs of 1 Mb/s: the step's compute and the messages' own
// cost are small beside the exchange, so the measured iteration lands between 0.8 and 3 times the
// fabric's figure, and the fabric adds at least half its figure to the same gang's time without a
// fabric. (Under the sanitizers on a loaded machine, the messages alone cost a third of the
// figure, so a fixed ratio of the two measurements would test the machine's load.)
TEST(RealPacing, AGangsExchangeTimeFollowsItsShareOfTheFabric) {
  const double expected = ExchangeSecondsPerIteration(kSlowGbps * 1e9 / 8);
  std::map<bool, double> measured;
  for (const bool fabric : {true, false}) {
    const std::string dir = FreshDir(fabric ? "real-pacing-fabric" : "real-pacing-none");
    std::vector<std::unique_ptr<NodeProcess>> processes;
    std::vector<std::string> nodes;
    for (int i = 0; i < 2; ++i) {
      const std::string node_dir = dir + "/node-" + std::to_string(i);
      std::filesystem::create_directories(node_dir);
      processes.push_back(std::make_unique<NodeProcess>(node_dir));
    }
    for (auto& process : processes) nodes.push_back(process->WaitForAddress());
    for (const std::string& node : nodes) ASSERT_FALSE(node.empty());
    const std::string config =
        RealCpu(2) + Placements(nodes) +
        (fabric ? Fabric("servers_per_rack: 2 server_nic_gbps: " + std::to_string(kSlowGbps)) : "");
    measured[fabric] = MedianSecondsPerIteration(dir, config, 1)[0];
  }
  EXPECT_GE(measured[true], 0.8 * expected) << "the exchange ran faster than its share allows";
  EXPECT_LE(measured[true], 3 * expected) << "the exchange took far longer than its share";
  EXPECT_GE(measured[true] - measured[false], 0.5 * expected)
      << "the fabric did not slow the exchange";
}

// Racks {0}, {1, 2}, {3} with uplinks of 1 Mb/s and fast NICs, in this process: job 0's gang on
// servers 0 and 1 and job 1's on 2 and 3 each cross rack 1's uplink in both directions, so each
// gets half of it: twice the time of one gang alone on the same fabric (a little less, as the
// gangs' exchanges do not overlap all of the time).
TEST(RealPacing, TwoGangsSharingARackUplinkEachGetAboutHalf) {
  const std::string fabric = Fabric(
      "rack { first_server: 0 last_server: 0 } rack { first_server: 1 last_server: 2 } "
      "rack { first_server: 3 last_server: 3 } server_nic_gbps: 100 tor_uplink_gbps: " +
      std::to_string(kSlowGbps));
  const double alone_expected = ExchangeSecondsPerIteration(kSlowGbps * 1e9 / 8);
  const double alone =
      MedianSecondsPerIteration(FreshDir("real-pacing-alone"), RealCpu(4) + fabric, 1)[0];
  const std::map<int64_t, double> shared =
      MedianSecondsPerIteration(FreshDir("real-pacing-shared"), RealCpu(4) + fabric, 2);
  EXPECT_GE(alone, 0.8 * alone_expected);
  EXPECT_LE(alone, 3 * alone_expected);
  for (const auto& [job, seconds] : shared) {
    SCOPED_TRACE("job " + std::to_string(job));
    EXPECT_GE(seconds, 1.5 * alone) << "the gangs did not share the uplink";
    EXPECT_LE(seconds, 2.5 * alone) << "slower than half the uplink";
  }
}

}  // namespace
}  // namespace troupe::testing
