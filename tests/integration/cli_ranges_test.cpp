// Flags and input paths out of range are bad input: one line naming the flag or field, exit
// status 2, nothing run. Values CLI11 would have read leniently (a sign on an unsigned seed, hex,
// a number too large to hold, junk after a port) are refused rather than clamped or truncated.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

class CliRanges : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("cli-ranges");
    config_ = SourcePath("tests/data/edges/cluster.textproto");
  }

  // Runs troupe and checks the contract; returns the error line.
  std::string Refused(std::vector<std::string> args) {
    ProcessResult r = RunTroupe(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    return r.err;
  }

  std::string dir_;
  std::string config_;
};

TEST_F(CliRanges, SeedMustBeAWholeNumberBelow2To63) {
  for (const char* seed : {"-5", "18446744073709551615", "9223372036854775808", "0x10", "7x"}) {
    const std::string err = Refused({"run", config_, "--seed", seed, "--out", dir_ + "/out"});
    EXPECT_NE(err.find("--seed"), std::string::npos) << seed << ": " << err;
  }
  EXPECT_NE(Refused({"chaos", config_, "--seed", "0"}).find("--seed"), std::string::npos);
  EXPECT_NE(Refused({"sweep", config_, "--over", "run.seed=1", "--seeds", "-3-4"}).find("--seeds"),
            std::string::npos);
  EXPECT_NE(
      Refused({"sweep", config_, "--over", "run.seed=1", "--seeds", "1-20000"}).find("--seeds"),
      std::string::npos);
}

// A misspelt name in --set, --over, --fault or the config file gets a "did you mean".
TEST_F(CliRanges, MisspeltNamesGetADidYouMean) {
  std::string err =
      Refused({"run", config_, "--set", "scheduler.polcy=fifo", "--out", dir_ + "/o"});
  EXPECT_NE(err.find("no field 'polcy' in troupe.config.Scheduler (did you mean 'policy'?)"),
            std::string::npos)
      << err;
  err = Refused({"sweep", config_, "--over", "scheduler.policy_name=fifo,srtff"});
  EXPECT_NE(err.find("'srtff' is not a registered policy (did you mean 'srtf'?)"),
            std::string::npos)
      << err;
  err = Refused({"run", config_, "--fault", "crsh:server:0@10", "--out", dir_ + "/o"});
  EXPECT_NE(err.find("unknown fault kind 'crsh' (did you mean 'crash'?)"), std::string::npos)
      << err;
  WriteFile(dir_ + "/typo.textproto", "cluster { sever { count: 1 } }\n");
  err = Refused({"validate", dir_ + "/typo.textproto"});
  EXPECT_NE(err.find("has no field named \"sever\" (did you mean 'servers'?)"), std::string::npos)
      << err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/o")) << "a refused run wrote its folder";
}

TEST_F(CliRanges, CountsAreBounded) {
  EXPECT_NE(Refused({"chaos", config_, "--runs", "0"}).find("--runs"), std::string::npos);
  EXPECT_NE(Refused({"chaos", config_, "--faults", "100000"}).find("--faults"), std::string::npos);
  EXPECT_NE(Refused({"sweep", config_, "--over", "run.seed=1", "--jobs", "0"}).find("--jobs"),
            std::string::npos);
}

TEST_F(CliRanges, NodePortIsParsedStrictly) {
  for (const char* listen : {"127.0.0.1:12abc", "127.0.0.1:65536", "127.0.0.1:-1", ":80"}) {
    EXPECT_NE(Refused({"node", "--listen", listen}).find("--listen"), std::string::npos) << listen;
  }
}

// A fault time past the run clock's range used to wrap and fire at time 0.
TEST_F(CliRanges, FaultTimesAreBounded) {
  const std::string err =
      Refused({"run", config_, "--fault", "crash:server:0@1e10", "--out", dir_ + "/out"});
  EXPECT_NE(err.find("--fault 'crash:server:0@1e10': at_s: must be in [0, 1000000000]"),
            std::string::npos)
      << err;
}

TEST_F(CliRanges, AFolderAsTraceOrAMissingModelsDirIsBadInput) {
  ProcessResult r =
      RunTroupe({"run", config_, "--set", "workload.trace_file=" + dir_, "--out", dir_ + "/out"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("workload.trace_file"), std::string::npos) << r.err;
  r = RunTroupe(
      {"run", config_, "--set", "workload.models_dir=" + dir_ + "/none", "--out", dir_ + "/out"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("workload.models_dir"), std::string::npos) << r.err;
}

// Limits that bind fields together: what a run would hold in memory or count in an int.
TEST_F(CliRanges, SizesThatBindFieldsTogetherAreBounded) {
  const std::string oasis = SourcePath("tests/data/edges/oasis.textproto");
  const std::string ps = SourcePath("tests/data/edges/ps.textproto");
  const std::string out = dir_ + "/out";
  // Each field in range, together past what the run can hold or count.
  EXPECT_NE(Refused({"run", oasis, "--out", out, "--set", "oasis.slots=10000", "--set",
                     "oasis.worker_servers=1000"})
                .find("oasis.slots: slots x (worker_servers + ps_machines)"),
            std::string::npos);
  EXPECT_NE(Refused({"run", oasis, "--out", out, "--set", "oasis.slot_s=1", "--set",
                     "oasis.epochs.hi=1000", "--set", "oasis.chunks.hi=1000", "--set",
                     "oasis.minibatches.hi=10000"})
                .find("oasis.slot_s: the longest job"),
            std::string::npos);
  EXPECT_NE(Refused({"run", ps, "--out", out, "--set", "paramserver.batches=1000000"})
                .find("paramserver.batches: batches x nodes x batch_size"),
            std::string::npos);
  EXPECT_NE(
      Refused({"run", config_, "--out", out, "--set", "cluster.servers.count=1"}).find("--set"),
      std::string::npos);  // a list is not set from the command line
}

// A slow fault's factor is a speed in [0.001, 1]: 1e-300 used to run (an SSD stage of 7e296 s, or
// 331k rounds finishing no job).
TEST_F(CliRanges, SlowFactorIsBounded) {
  const std::string ps = SourcePath("tests/data/edges/ps.textproto");
  for (const auto& [config, flag] : std::vector<std::pair<std::string, std::string>>{
           {ps, "slow:ps:0@0,x=1e-300"},
           {config_, "slow:server:0-1@0,x=1e-300"},
           {config_, "slow:server:0-1@0,x=4.9e-324"}}) {
    const std::string err = Refused({"run", config, "--fault", flag, "--out", dir_ + "/out"});
    EXPECT_EQ(err.rfind("troupe: --fault '" + flag + "': factor: must be in [0.001, 1]", 0), 0u)
        << err;
  }
}

// chaos checks every flag before it runs anything, the baseline included.
TEST_F(CliRanges, ChaosRefusesBadKindsBeforeTheBaseline) {
  const std::string keep = dir_ + "/keep";
  std::string err = Refused({"chaos", config_, "--kinds", "bogus", "--keep", keep, "--keep-all"});
  EXPECT_NE(err.find("--kinds: unknown fault kind 'bogus'"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(keep + "/run-0")) << "the baseline ran";
  err = Refused({"chaos", config_, "--kinds", "crash,dely", "--keep", keep});
  EXPECT_NE(err.find("--kinds: unknown fault kind 'dely' (did you mean 'delay'?)"),
            std::string::npos)
      << err;
  err = Refused({"chaos", SourcePath("tests/data/edges/ps.textproto"), "--kinds", "crash,drop",
                 "--keep", keep, "--keep-all"});
  EXPECT_NE(err.find("--kinds: a parameter-server run takes crash, slow and disk faults"),
            std::string::npos)
      << err;
  EXPECT_FALSE(std::filesystem::exists(keep + "/run-0")) << "the baseline ran";
}

// paramserver.ssd_dir that cannot be a folder of stores is refused before the run, writing
// nothing: a path under a regular file, a regular file, a folder on /proc.
TEST_F(CliRanges, ParameterServerSsdDirThatCannotBeAFolderIsRefused) {
  const std::string ps = SourcePath("tests/data/edges/ps.textproto");
  const std::string file = dir_ + "/a-file";
  WriteFile(file, "mine");
  for (const std::string& ssd : {file + "/ssd", file, std::string("/proc/troupe-ssd")}) {
    const std::string err =
        Refused({"run", ps, "--out", dir_ + "/out", "--set", "paramserver.ssd_dir=" + ssd});
    EXPECT_NE(err.find("paramserver.ssd_dir " + ssd + ": "), std::string::npos) << err;
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/out")) << ssd;
  }
  EXPECT_EQ(ReadFile(file), "mine");
}

// A file a user added to a node folder troupe made is never deleted by the next run: it refuses.
TEST_F(CliRanges, ParameterServerKeepsAFileAddedToItsSsdFolder) {
  const std::string ps = SourcePath("tests/data/edges/ps.textproto");
  const std::string ssd = "paramserver.ssd_dir=" + dir_ + "/ssd";
  ProcessResult first = RunTroupe({"run", ps, "--out", dir_ + "/run1", "--set", ssd});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(std::filesystem::is_directory(dir_ + "/ssd/node-0"));
  WriteFile(dir_ + "/ssd/node-0/notes.txt", "mine");
  const std::string err = Refused({"run", ps, "--out", dir_ + "/run2", "--set", ssd});
  EXPECT_NE(err.find(dir_ + "/ssd/node-0: holds 'notes.txt', which troupe did not write"),
            std::string::npos)
      << err;
  EXPECT_EQ(ReadFile(dir_ + "/ssd/node-0/notes.txt"), "mine");
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/run2"));
  // Without it, the folder is troupe's again and the next run empties and reuses it.
  std::filesystem::remove(dir_ + "/ssd/node-0/notes.txt");
  ProcessResult third = RunTroupe({"run", ps, "--out", dir_ + "/run3", "--set", ssd});
  EXPECT_EQ(third.exit_code, 0) << third.err;
}

}  // namespace
}  // namespace troupe::testing
