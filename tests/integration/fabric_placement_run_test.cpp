// fabric.placement end to end (docs/network.md, "Placement"), the troupe binary on hand-made
// traces whose placements are worked out below, and on Philly's first jobs on scarce links:
// consolidation puts a job in the tightest rack that holds it where the oblivious placement
// splits it over two; Tiresias's wait or spread holds a job that no rack holds back until it
// has waited max_wait_s; consolidating cuts the contention jobs meet; runs are deterministic.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// 4 servers of 4 GPUs, two a rack (8 GPUs a rack), every lease recorded.
std::string Config(const std::string& trace, const std::string& placement) {
  return "cluster { servers { count: 4 gpus: 4 cpus: 12 memory_gb: 250 } }\n"
         "workload { trace_file: \"" +
         trace +
         "\" }\n"
         "fabric { servers_per_rack: 2 placement { " +
         placement +
         " } }\n"
         "scheduler { policy: fifo mechanism: proportional round_s: 300 }\n"
         "run { mode: emulated seed: 1 lease_log: true }\n";
}

// The servers job `job` holds in its first lease, and that lease's round.
struct FirstLease {
  int64_t round = -1;
  std::set<int> servers;
};

FirstLease FirstLeaseOf(const std::string& run_dir, int64_t job) {
  FirstLease first;
  for (const auto& row : ReadCsv(run_dir + "/leases.csv")) {
    if (std::stoll(row.at("job_id")) != job) continue;
    const int64_t round = std::stoll(row.at("round"));
    if (first.round >= 0 && round != first.round) break;
    first.round = round;
    first.servers.insert(std::stoi(row.at("server")));
  }
  return first;
}

class FabricPlacementRun : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshDir("fabric-placement-run"); }

  // Runs `placement` on `trace` (CSV text) and answers the run's folder.
  std::string Run(const std::string& name, const std::string& trace, const std::string& placement) {
    WriteFile(dir_ + "/" + name + ".csv", trace);
    WriteFile(dir_ + "/" + name + ".textproto", Config(name + ".csv", placement));
    const std::string out = dir_ + "/" + name;
    const ProcessResult r =
        RunTroupe({"run", dir_ + "/" + name + ".textproto", "--out", out, "--quiet"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out;
  }

  std::string dir_;
};

// Two 1-GPU jobs go to server 0 (best fit); a 6-GPU job then finds rack 0 with 6 GPUs free
// (servers 0 and 1) and rack 1 with 8. Oblivious: the servers with the most free GPUs, 1 and 2,
// one in each rack. Consolidate: rack 0, the tightest that holds it.
TEST_F(FabricPlacementRun, ConsolidationTakesTheTightestRackWhereObliviousSplitsTheJob) {
  const std::string trace =
      "job_id,model,arrival_s,iterations,gpus\n"
      "0,res50,0,200000,1\n"
      "1,res50,0,200000,1\n"
      "2,gnmt,0,20000,6\n";
  const FirstLease oblivious = FirstLeaseOf(Run("oblivious", trace, "rule: oblivious"), 2);
  const FirstLease packed = FirstLeaseOf(Run("consolidate", trace, "rule: consolidate"), 2);
  EXPECT_EQ(oblivious.round, 0);
  EXPECT_EQ(oblivious.servers, (std::set<int>{1, 2}));
  EXPECT_EQ(packed.round, 0);
  EXPECT_EQ(packed.servers, (std::set<int>{0, 1}));
}

// Three 3-GPU jobs leave rack 0 with 2 GPUs free and rack 1 with 5: no rack holds the 6-GPU job
// that arrives with them. Spreading at once, it starts in round 0 over both racks; told to wait
// 1800 s it starts in round 6 (1800 s of 300 s rounds), and over both racks then.
TEST_F(FabricPlacementRun, AJobNoRackHoldsWaitsMaxWaitBeforeItSpreads) {
  const std::string trace =
      "job_id,model,arrival_s,iterations,gpus\n"
      "0,res50,0,200000,3\n"
      "1,res50,0,200000,3\n"
      "2,res50,0,200000,3\n"
      "3,gnmt,0,20000,6\n";
  const FirstLease at_once =
      FirstLeaseOf(Run("at-once", trace, "rule: consolidate max_wait_s: 0"), 3);
  const FirstLease waited =
      FirstLeaseOf(Run("waited", trace, "rule: consolidate max_wait_s: 1800"), 3);
  EXPECT_EQ(at_once.round, 0);
  EXPECT_EQ(waited.round, 6);
  for (const FirstLease* lease : {&at_once, &waited}) {
    std::set<int> racks;
    for (int server : lease->servers) racks.insert(server / 2);
    EXPECT_EQ(racks.size(), 2u);
  }
}

double ContentionSeconds(const std::string& run_dir) {
  double total = 0;
  for (const auto& row : ReadCsv(run_dir + "/jobs.csv")) total += std::stod(row.at("contention_s"));
  return total;
}

// Philly's first 1,000 jobs on its 512-GPU fabric with scarce links (10 Gb/s NICs, 16:1): the
// jobs that span servers meet on the racks' uplinks when placed obliviously, and far less when
// consolidated; two consolidated runs write the same bytes.
TEST_F(FabricPlacementRun, ConsolidatingCutsPhillysContentionAndRunsTheSameTwice) {
  const std::string config = SourcePath("configs/philly-512-fabric.textproto");
  const std::vector<std::string> scarce = {"--set", "workload.max_jobs=1000",
                                           "--set", "fabric.tor_oversubscription=16",
                                           "--set", "fabric.server_nic_gbps=10"};
  std::map<std::string, double> contention;
  for (const std::string name : {"oblivious", "consolidate", "consolidate-again"}) {
    std::vector<std::string> args = {"run", config, "--out", dir_ + "/" + name, "--quiet"};
    args.insert(args.end(), scarce.begin(), scarce.end());
    args.insert(args.end(), {"--set", name == "oblivious" ? "fabric.placement.rule=oblivious"
                                                          : "fabric.placement.rule=consolidate"});
    const ProcessResult r = RunTroupe(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    contention[name] = ContentionSeconds(dir_ + "/" + name);
  }
  EXPECT_GT(contention["oblivious"], 3600) << "the oblivious placement should contend";
  EXPECT_LT(contention["consolidate"], 0.5 * contention["oblivious"]);
  for (const char* file : {"/jobs.csv", "/rounds.csv", "/links.csv"}) {
    EXPECT_TRUE(ReadFile(dir_ + "/consolidate" + file) ==
                ReadFile(dir_ + "/consolidate-again" + file))
        << file << " differs between two runs";
  }
}

// max_wait_s without rule consolidate is refused before anything runs.
TEST_F(FabricPlacementRun, AWaitWithoutConsolidationIsBadInput) {
  WriteFile(dir_ + "/t.csv", "job_id,model,arrival_s,iterations,gpus\n0,res50,0,100,1\n");
  WriteFile(dir_ + "/bad.textproto", Config("t.csv", "max_wait_s: 60"));
  const ProcessResult r =
      RunTroupe({"run", dir_ + "/bad.textproto", "--out", dir_ + "/bad", "--quiet"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fabric.placement.max_wait_s"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/bad"));
}

}  // namespace
}  // namespace troupe::testing
