// Bad input is an answer: each case below gets one error line on stderr naming the file and line
// (and column or field), exit status 2, and no run directory.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kGoodCluster[] =
    "cluster { servers { count: 2 gpus: 8 cpus: 24 memory_gb: 500 } }\n";

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = FreshDir("bad"); }

  // Runs `troupe run` on a config text and checks the common contract; returns stderr.
  std::string RunExpectingError(const std::string& config_text,
                                const std::vector<std::string>& extra = {}) {
    const std::string config = dir_ + "/config.textproto";
    WriteFile(config, config_text);
    const std::string out = dir_ + "/out";
    std::vector<std::string> args = {"run", config, "--out", out};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult r = RunTroupe(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << "bad input left a run directory";
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    return r.err;
  }

  std::string Trace(const std::string& body) {
    const std::string path = dir_ + "/trace.csv";
    WriteFile(path, "job_id,model,arrival_s,iterations,gpus\n" + body);
    return std::string(kGoodCluster) + "workload { trace_file: \"" + path + "\" }\n";
  }

  std::string dir_;
};

TEST_F(BadInput, UnknownFieldNamesFileLineAndColumn) {
  const std::string err = RunExpectingError(std::string(kGoodCluster) + "run {\n  sed: 3\n}\n");
  EXPECT_NE(err.find("config.textproto:3:3"), std::string::npos) << err;
  EXPECT_NE(err.find("sed"), std::string::npos) << err;
}

TEST_F(BadInput, WrongTypeNamesTheLine) {
  const std::string err =
      RunExpectingError(std::string(kGoodCluster) + "run { seed: \"seven\" }\n");
  EXPECT_NE(err.find("config.textproto:2:"), std::string::npos) << err;
}

TEST_F(BadInput, NegativeOrZeroCapacityNamesTheField) {
  std::string err =
      RunExpectingError("cluster { servers { count: 2 gpus: 8 cpus: -4 memory_gb: 500 } }\n");
  EXPECT_NE(err.find("cluster.servers[0].cpus"), std::string::npos) << err;
  err = RunExpectingError("cluster { servers { count: 2 gpus: 0 cpus: 4 memory_gb: 500 } }\n");
  EXPECT_NE(err.find("cluster.servers[0].gpus"), std::string::npos) << err;
}

TEST_F(BadInput, JobNeedingMoreGpusThanTheClusterNamesTheTraceLine) {
  const std::string err = RunExpectingError(Trace("0,res50,0,100,1\n1,res50,5,100,32\n"));
  EXPECT_NE(err.find("trace.csv:3"), std::string::npos) << err;
  EXPECT_NE(err.find("32 GPUs"), std::string::npos) << err;
}

TEST_F(BadInput, MissingTraceFileNamesIt) {
  const std::string err = RunExpectingError(std::string(kGoodCluster) +
                                            "workload { trace_file: \"/nonexistent/t.csv\" }\n");
  EXPECT_NE(err.find("/nonexistent/t.csv"), std::string::npos) << err;
}

TEST_F(BadInput, TraceLineWithAMissingColumn) {
  const std::string err = RunExpectingError(Trace("0,res50,0,100,1\n1,res50,5,100\n"));
  EXPECT_NE(err.find("trace.csv:3"), std::string::npos) << err;
}

TEST_F(BadInput, TraceLineWithANonNumber) {
  const std::string err = RunExpectingError(Trace("0,res50,zero,100,1\n"));
  EXPECT_NE(err.find("trace.csv:2"), std::string::npos) << err;
  EXPECT_NE(err.find("arrival_s"), std::string::npos) << err;
}

TEST_F(BadInput, BadSetOverrideNamesIt) {
  const std::string err = RunExpectingError(kGoodCluster, {"--set", "scheduler.polcy=srtf"});
  EXPECT_NE(err.find("scheduler.polcy"), std::string::npos) << err;
}

TEST(Cli, ValidateAndVersion) {
  ProcessResult version = RunTroupe({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("troupe "), std::string::npos);
  ProcessResult ok = RunTroupe({"validate", SourcePath("configs/default.textproto")});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("128 GPUs"), std::string::npos) << ok.out;
  ProcessResult missing = RunTroupe({"validate", "/nonexistent.textproto"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent.textproto"), std::string::npos);
}

}  // namespace
}  // namespace troupe::testing
