// Flags and input paths out of range are bad input: one line naming the flag or field, exit
// status 2, nothing run. Values CLI11 would have read leniently (a sign on an unsigned seed, hex,
// a number too large to hold, junk after a port) are refused rather than clamped or truncated.
#include <gtest/gtest.h>

#include <algorithm>

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

}  // namespace
}  // namespace troupe::testing
