// `troupe chaos` and `--fault` as users call them: a short campaign of random fault schedules
// (the one CI runs) holds every invariant, a run replays from the seed the table prints, and bad
// fault flags are refused with the flag named and nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <iterator>
#include <regex>
#include <sstream>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kCluster[] =
    "cluster { servers { name: \"s\" count: 6 gpus: 4 cpus: 16 memory_gb: 200 } }\n"
    "workload { generator { jobs_per_hour: 8 num_jobs: 120 multi_gpu: true } }\n"
    "scheduler { mechanism: tune }\n"
    "run { seed: 5 }\n";

std::string WriteConfig(const std::string& name, const std::string& text) {
  const std::string path = FreshDir(name) + "/config.textproto";
  WriteFile(path, text);
  return path;
}

int CountLines(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The columns after the run number of row `run` of a chaos table ("" if there is none).
std::string Row(const std::string& out, int run) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    int first = -1;
    if (fields >> first && first == run) {
      std::string rest;
      std::getline(fields, rest);
      return rest;
    }
  }
  return "";
}

TEST(Chaos, ShortCampaignHoldsEveryInvariant) {
  const std::string config = WriteConfig("chaos", kCluster);
  ProcessResult r = RunTroupe({"chaos", config, "--runs", "12", "--seed", "7", "--faults", "8"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("13 runs, 0 failed"), std::string::npos) << r.out;
  EXPECT_EQ(CountLines(r.out, "  ok\n"), 13) << r.out;
}

// Crash-only campaigns with many faults: crashes of the scheduler overlap, servers are lost for
// good (some jobs no longer fit), and a restarted scheduler meets jobs that failed before it.
// Every "job N failed" the scheduler logs is a failure in the table: a second scheduler, or a
// restarted one failing a job again, logged failures the table did not count.
TEST(Chaos, FailureWarningsAgreeWithTheTable) {
  const std::string config = WriteConfig("chaos-crashes", kCluster);
  ProcessResult r = RunTroupe(
      {"chaos", config, "--runs", "4", "--seed", "11", "--faults", "60", "--kinds", "crash"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("5 runs, 0 failed"), std::string::npos) << r.out;
  const std::string log = r.out + r.err;
  EXPECT_GT(CountLines(log, "the scheduler was down already"), 0) << "no overlapping crashes";
  EXPECT_GT(CountLines(log, "servers lost for good)"), 0) << "no job outgrew the cluster";
  int failed_in_table = 0, servers_lost = 0;
  for (int run = 1; run <= 4; ++run) {
    std::istringstream fields(Row(r.out, run));
    std::string seed;
    int faults = 0, recoveries = 0, lost_servers = 0, lost_jobs = 0, failed = 0;
    fields >> seed >> faults >> recoveries >> lost_servers >> lost_jobs >> failed;
    EXPECT_EQ(lost_jobs, 0) << "run " << run;
    failed_in_table += failed;
    servers_lost += lost_servers;
  }
  EXPECT_GT(servers_lost, 0) << r.out;
  EXPECT_GT(failed_in_table, 0) << r.out;
  static const std::regex warning(R"(scheduler: job \d+ failed: )");
  const auto warnings =
      std::distance(std::sregex_iterator(log.begin(), log.end(), warning), std::sregex_iterator());
  EXPECT_EQ(warnings, failed_in_table) << r.out;
}

TEST(Chaos, ParameterServerCampaignLosesNoUpdate) {
  ProcessResult r = RunTroupe({"chaos", SourcePath("configs/hps_ctr_faults.textproto"), "--runs",
                               "2", "--seed", "3", "--faults", "3"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("3 runs, 0 failed"), std::string::npos) << r.out;
}

TEST(Chaos, OneRunFromItsSeedReplaysTheCampaignRow) {
  const std::string config = WriteConfig("chaos-replay", kCluster);
  ProcessResult campaign =
      RunTroupe({"chaos", config, "--runs", "3", "--seed", "20", "--faults", "6"});
  ProcessResult replay =
      RunTroupe({"chaos", config, "--runs", "1", "--seed", "22", "--faults", "6"});
  ASSERT_EQ(campaign.exit_code, 0) << campaign.err;
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  // Row 3 of the campaign (fault seed 22) and row 1 of the replay: the same figures.
  EXPECT_FALSE(Row(campaign.out, 3).empty()) << campaign.out;
  EXPECT_EQ(Row(campaign.out, 3), Row(replay.out, 1)) << campaign.out << replay.out;
}

TEST(Chaos, BadFaultFlagsAreRefusedAndWriteNothing) {
  const std::string config = WriteConfig("bad-fault", kCluster);
  const std::string out = FreshDir("bad-fault-out") + "/run";
  struct Case {
    std::string flag, message;
  };
  for (const Case& c : std::vector<Case>{
           {"explode:server:1@0", "expected KIND:TARGET@AT"},
           {"crash:server:9@100", "has no server 9"},
           {"crash:rack:1@100", "unknown actor kind"},
           {"drop:*@0,p=1.5", "probability: must be in [0, 1], got 1.5"},
           {"crash:server:1@1e10", "at_s: must be in [0, 1000000000]"},
           {"crash:scheduler@100", "must restart"},
           {"slow:job:3@0,x=0.5", "slow hits a server"},
       }) {
    ProcessResult r = RunTroupe({"run", config, "--out", out, "--fault", c.flag});
    EXPECT_EQ(r.exit_code, 2) << c.flag << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.flag << ": " << r.err;
    // The error names the flag the user typed, not the config file and an index into it.
    EXPECT_EQ(r.err.rfind("troupe: --fault '" + c.flag + "'", 0), 0u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << c.flag;
  }
}

TEST(Chaos, ParameterServerRunsTakeOnlyPsFaults) {
  const std::string out = FreshDir("ps-bad-fault") + "/run";
  for (const std::string flag : {"drop:*@0,p=0.1", "crash:server:0@1", "crash:ps:9@0.001"}) {
    ProcessResult r = RunTroupe(
        {"run", SourcePath("configs/hps_ctr_faults.textproto"), "--out", out, "--fault", flag});
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.err;
    EXPECT_EQ(r.err.rfind("troupe: --fault '" + flag + "'", 0), 0u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << flag;
  }
}

TEST(Chaos, FaultFlagRunsWriteFaultsCsv) {
  const std::string config = WriteConfig("fault-flag", kCluster);
  const std::string out = FreshDir("fault-flag-out") + "/run";
  ProcessResult r =
      RunTroupe({"run", config, "--out", out, "--quiet", "--fault", "crash:server:2@7200+3600"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto faults = ReadCsv(out + "/faults.csv");
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].at("fault"), "crash server:2 @7200s restart +3600s");
  EXPECT_EQ(faults[0].at("recovered_s"), "10800.000");
  EXPECT_NE(ReadFile(out + "/summary.json").find("\"faults_injected\": 1"), std::string::npos);
}

}  // namespace
}  // namespace troupe::testing
