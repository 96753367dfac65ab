// The troupe binary on a fabric (docs/network.md), end to end: the same config gives the same
// bytes; a config without a fabric writes what it always did; jobs whose GPUs span servers
// communicate, contend and record it, and scarcer links cost them more; `troupe sweep` varies the
// fabric's fields like any other.
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "messages/summary.pb.h"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

// 8 servers of 4 GPUs, two a rack under one spine, and jobs of 3, 6 and 16 GPUs: each spans
// servers, and two jobs share a server (and its NIC) or a rack's uplink.
constexpr char kSpanningTrace[] =
    "job_id,model,arrival_s,iterations,gpus\n"
    "0,gnmt,0,20000,6\n"
    "1,transformer,0,20000,6\n"
    "2,res50,0,20000,6\n"
    "3,alexnet,0,20000,6\n"
    "4,lstm,100,5000,3\n"
    "5,res18,200,30000,6\n"
    "6,gnmt,300,10000,16\n"
    "7,deepspeech,400,10000,3\n";

std::string SpanningConfig(const std::string& trace) {
  return "cluster { servers { count: 8 gpus: 4 cpus: 12 memory_gb: 250 } }\n"
         "workload { trace_file: \"" +
         trace +
         "\" }\n"
         "fabric { servers_per_rack: 2 server_nic_gbps: 100 tor_oversubscription: 1 }\n"
         "scheduler { policy: fifo mechanism: proportional round_s: 300 }\n"
         "run { mode: emulated seed: 1 }\n";
}

// The same links, four times scarcer at the racks and ten times at the servers.
const std::vector<std::string> kScarceLinks = {"--set", "fabric.tor_oversubscription=16", "--set",
                                               "fabric.server_nic_gbps=10"};

// Philly's first 2,000 jobs on its 512-GPU fabric with scarce links: jobs cross and contend.
const std::vector<std::string> kPhillyContended = {"--set", "workload.max_jobs=2000",
                                                   "--set", "fabric.tor_oversubscription=16",
                                                   "--set", "fabric.server_nic_gbps=10"};

// `troupe run config --out out --quiet extra...`; fails the test unless it exits 0.
void RunTo(const std::string& config, const std::string& out,
           const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"run", config, "--out", out, "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  ProcessResult r = RunTroupe(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

summaries::ClusterRunSummary ReadSummary(const std::string& run_dir) {
  summaries::ClusterRunSummary summary;
  const std::string json = ReadFile(run_dir + "/summary.json");
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &summary).ok()) << json;
  return summary;
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

double Number(const std::map<std::string, std::string>& row, const std::string& column) {
  const auto it = row.find(column);
  EXPECT_NE(it, row.end()) << "no column " << column;
  return it == row.end() ? 0 : std::stod(it->second);
}

class FabricRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("fabric-run");
    WriteFile(dir_ + "/trace.csv", kSpanningTrace);
    config_ = dir_ + "/spanning.textproto";
    WriteFile(config_, SpanningConfig(dir_ + "/trace.csv"));
  }

  // Runs `config` twice with `extra` and expects the same bytes in every record.
  void ExpectSameBytesTwice(const std::string& config, const std::vector<std::string>& extra) {
    const std::string a = dir_ + "/twice-a", b = dir_ + "/twice-b";
    RunTo(config, a, extra);
    RunTo(config, b, extra);
    for (const char* file : {"/jobs.csv", "/rounds.csv", "/links.csv"}) {
      const std::string bytes_a = ReadFile(a + file);
      EXPECT_GT(std::count(bytes_a.begin(), bytes_a.end(), '\n'), 1) << file << " has no rows";
      EXPECT_TRUE(bytes_a == ReadFile(b + file)) << file << " differs between two runs";
    }
    EXPECT_GT(ReadSummary(a).network().contention_hours(), 0) << "the runs should contend";
    fs::remove_all(a);
    fs::remove_all(b);
  }

  std::string dir_, config_;
};

TEST_F(FabricRun, PhillyWithContentionTwiceGivesTheSameBytes) {
  const std::string philly = SourcePath("configs/philly-512-fabric.textproto");
  ExpectSameBytesTwice(philly, kPhillyContended);
  std::vector<std::string> phased = kPhillyContended;
  phased.insert(phased.end(), {"--set", "fabric.traffic=phased"});
  ExpectSameBytesTwice(philly, phased);
}

TEST_F(FabricRun, SpanningJobsTwiceGiveTheSameBytesInBothTrafficModels) {
  for (const char* traffic : {"fluid", "phased"}) {
    SCOPED_TRACE(traffic);
    ExpectSameBytesTwice(config_, {"--set", std::string("fabric.traffic=") + traffic});
  }
}

// Without a fabric block the records are what they were before fabrics existed; a fabric whose
// every job fits in one server (the multi-GPU mix of 1-8 GPUs on 8-GPU servers, placed
// proportionally) changes no job and no round: no traffic leaves a server.
TEST_F(FabricRun, WithoutAFabricNothingChangesAndAFabricNoJobCrossesChangesNoJob) {
  const std::string plain = dir_ + "/plain", fabric = dir_ + "/fabric";
  // The first 600 jobs at 4 an hour (the shipped window, jobs 4000-4999 of ~12,000 on a deep
  // queue, takes minutes under the sanitizers): every job size of the mix, 1 to 8 GPUs.
  const std::vector<std::string> window = {"--set", "run.measure_first_job=0",
                                           "--set", "run.measure_last_job=599",
                                           "--set", "workload.generator.jobs_per_hour=4"};
  RunTo(SourcePath("configs/synergy-128-multigpu.textproto"), plain, window);
  RunTo(SourcePath("configs/fabric-128-4to1.textproto"), fabric, window);

  EXPECT_FALSE(fs::exists(plain + "/links.csv"));
  const std::string plain_jobs = ReadFile(plain + "/jobs.csv");
  EXPECT_EQ(FirstLine(plain_jobs).find("comm_s"), std::string::npos) << FirstLine(plain_jobs);
  EXPECT_EQ(FirstLine(plain_jobs).find("contention_s"), std::string::npos);
  EXPECT_EQ(ReadFile(plain + "/summary.json").find("\"network\""), std::string::npos);
  EXPECT_FALSE(ReadSummary(plain).has_network());

  EXPECT_EQ(ReadSummary(fabric).network().jobs_crossing(), 0);
  EXPECT_EQ(ReadFile(fabric + "/links.csv"),
            "round,link,start_s,end_s,capacity_gbps,bytes,utilisation,flows,rate_gbps\n");
  // jobs.csv with a fabric is the same table with comm_s and contention_s appended, here all zero.
  std::istringstream with(ReadFile(fabric + "/jobs.csv")), without(plain_jobs);
  std::string line_with, line_without;
  int64_t lines = 0;
  while (std::getline(without, line_without)) {
    ASSERT_TRUE(std::getline(with, line_with)) << "fewer jobs with the fabric";
    const std::string tail = lines++ == 0 ? ",comm_s,contention_s" : ",0.000,0.000";
    EXPECT_EQ(line_with, line_without + tail);
  }
  EXPECT_FALSE(std::getline(with, line_with)) << "more jobs with the fabric";
  EXPECT_GT(lines, 1000);
  EXPECT_TRUE(ReadFile(plain + "/rounds.csv") == ReadFile(fabric + "/rounds.csv"));
}

TEST_F(FabricRun, JobsSpanningServersCommunicateAndContend) {
  const std::string out = dir_ + "/spanning";
  RunTo(config_, out);
  const auto jobs = ReadCsv(out + "/jobs.csv");
  ASSERT_EQ(jobs.size(), 8u);
  double comm_s = 0, contention_s = 0;
  for (const auto& job : jobs) {
    SCOPED_TRACE("job " + job.at("job_id"));
    EXPECT_GE(Number(job, "contention_s"), 0);
    EXPECT_LE(Number(job, "contention_s"), Number(job, "comm_s"));
    comm_s += Number(job, "comm_s");
    contention_s += Number(job, "contention_s");
  }
  EXPECT_GT(comm_s, 0);
  EXPECT_GT(contention_s, 0);

  const auto links = ReadCsv(out + "/links.csv");
  ASSERT_FALSE(links.empty());
  for (const auto& link : links) {
    SCOPED_TRACE(link.at("round") + " " + link.at("link"));
    // No link carries more than its capacity (the 1e-6 is the file's rounding).
    EXPECT_LE(Number(link, "utilisation"), 1 + 1e-6);
    EXPECT_LE(Number(link, "rate_gbps"), Number(link, "capacity_gbps") + 1e-3);
    EXPECT_GT(Number(link, "flows"), 0);
  }

  const summaries::NetworkSummary network = ReadSummary(out).network();
  EXPECT_EQ(network.jobs_crossing(), 8);
  EXPECT_NEAR(network.comm_hours(), comm_s / 3600, 1e-3);
  EXPECT_NEAR(network.contention_hours(), contention_s / 3600, 1e-3);
  EXPECT_GT(network.contention_slowdown_mean(), 1);
  EXPECT_GE(network.contention_slowdown_p99(), network.contention_slowdown_mean());
  EXPECT_FALSE(network.busiest_links().empty());
}

TEST_F(FabricRun, ScarcerLinksCostMoreContentionAndNoShorterJobs) {
  const std::string ample = dir_ + "/ample", scarce = dir_ + "/scarce";
  RunTo(config_, ample);
  RunTo(config_, scarce, kScarceLinks);
  const summaries::ClusterRunSummary a = ReadSummary(ample), s = ReadSummary(scarce);
  EXPECT_GT(s.network().contention_hours(), a.network().contention_hours());
  EXPECT_GT(s.network().comm_hours(), a.network().comm_hours());
  EXPECT_GE(s.jct_mean_s(), a.jct_mean_s());
}

// One run per value, each on its own fabric: a rack's uplink is its two servers' NICs divided by
// the swept oversubscription.
TEST_F(FabricRun, ASweepOverAFabricFieldRunsOnceForEachValue) {
  const std::string out = dir_ + "/sweep";
  ProcessResult r = RunTroupe({"sweep", config_, "--over", "fabric.tor_oversubscription=1,16",
                               "--out", out, "--jobs", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = ReadCsv(out + "/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    const std::string value = row.at("fabric.tor_oversubscription");
    SCOPED_TRACE(value);
    const std::string run = out + "/" + row.at("run_dir");
    EXPECT_EQ(run, out + "/tor_oversubscription-" + value + "_seed-1");
    EXPECT_NE(ReadFile(run + "/config.textproto").find("tor_oversubscription: " + value),
              std::string::npos);
    const auto links = ReadCsv(run + "/links.csv");
    const auto uplink = std::find_if(links.begin(), links.end(),
                                     [](const auto& l) { return l.at("link") == "rack0.up"; });
    ASSERT_NE(uplink, links.end());
    EXPECT_DOUBLE_EQ(Number(*uplink, "capacity_gbps"), 200 / std::stod(value));
    EXPECT_TRUE(ReadSummary(run).has_network());
  }
}

}  // namespace
}  // namespace troupe::testing
