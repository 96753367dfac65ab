// `troupe sweep` works for every kind of run (runs/run_kind.hpp): a parameter-server and an OASiS
// config swept over their own fields give one row a run, with that kind's figures as columns.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

TEST(SweepKinds, AParameterServerSweepComparesItsOwnFigures) {
  const std::string out = FreshDir("sweep-ps") + "/sweep";
  ProcessResult r = RunTroupe({"sweep", SourcePath("tests/data/edges/ps.textproto"), "--over",
                               "paramserver.batches=20,40", "--out", out, "--jobs", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("AUC"), std::string::npos) << r.out;
  const auto rows = ReadCsv(out + "/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("paramserver.batches"), "20");
  EXPECT_GT(std::stod(rows[0].at("examples_per_s")), 0);
  EXPECT_GT(std::stod(rows[1].at("auc")), 0.5);
  for (const auto& row : rows) {
    EXPECT_TRUE(fs::exists(out + "/batches-" + row.at("paramserver.batches") + "_seed-" +
                           row.at("seed") + "/batches.csv"));
  }
}

TEST(SweepKinds, AnOasisSweepComparesPoliciesOverSeeds) {
  const std::string out = FreshDir("sweep-oasis") + "/sweep";
  ProcessResult r = RunTroupe({"sweep", SourcePath("tests/data/edges/oasis.textproto"), "--over",
                               "oasis.policy=oasis,fifo", "--seeds", "1-2", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("mean over seeds"), std::string::npos) << r.out;
  const auto rows = ReadCsv(out + "/sweep.csv");
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    EXPECT_GE(std::stod(row.at("total_utility")), 0);
    EXPECT_EQ(std::stoi(row.at("admitted")) + std::stoi(row.at("rejected")) > 0, true);
  }
}

}  // namespace
}  // namespace troupe::testing
