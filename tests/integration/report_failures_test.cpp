// `troupe report` on a run whose servers failed (docs/report.md, docs/failures.md): it gets the
// failure timeline and its failures block as a table by cause; a run without failures gets
// neither; a malformed interruptions.csv gets one line naming it. Skipped where python3 with
// matplotlib and pandas is missing.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/plotting.hpp"
#include "tests/integration/report_checks.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

class ReportFailures : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = WhyPlottingIsMissing(); !why.empty()) GTEST_SKIP() << why;
    dir_ = FreshDir("report-failures");
  }

  // The shipped failure-trace example on 300 jobs.
  std::string FailureRun(const std::string& name) {
    const std::string out = dir_ + "/" + name;
    ProcessResult r = RunTroupe({"run", SourcePath("configs/failure-trace.textproto"), "--out", out,
                                 "--quiet", "--set", "workload.generator.num_jobs=300", "--set",
                                 "run.measure_first_job=0", "--set", "run.measure_last_job=299"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out;
  }

  std::string dir_;
};

TEST_F(ReportFailures, ARunWithFailedServersGetsItsTimelineAndTheTableByCause) {
  const std::string run = FailureRun("failed");
  ASSERT_TRUE(fs::exists(run + "/interruptions.csv"));
  ProcessResult r = RunTroupe({"report", run});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectGoodPng(run + "/report/failed-failures.png");
  const std::string html = ReadFile(run + "/report/report.html");
  EXPECT_NE(html.find("<tr><th>by_cause</th>"), std::string::npos);
  EXPECT_NE(html.find("failure:gpu"), std::string::npos);
  EXPECT_NE(html.find("waited for repair"), std::string::npos) << "the timeline's caption";
}

TEST_F(ReportFailures, ARunWithoutFailuresHasNoTimeline) {
  const std::string plain = dir_ + "/plain";
  fs::copy(SourcePath("tests/data/run-small"), plain, fs::copy_options::recursive);
  ProcessResult r = RunTroupe({"report", plain});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(plain + "/report/plain-failures.png"));
  EXPECT_EQ(ReadFile(plain + "/report/report.html").find("by_cause"), std::string::npos);
}

TEST_F(ReportFailures, AMalformedInterruptionsCsvIsNamed) {
  const std::string run = FailureRun("bad");
  std::string csv = ReadFile(run + "/interruptions.csv");
  csv.insert(csv.find('\n') + 1, "12.5,1,8,failure:gpu,notanumber,1,8\n");
  WriteFile(run + "/interruptions.csv", csv);
  ProcessResult r = RunTroupe({"report", run, "--out", dir_ + "/bad-report"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("interruptions.csv:2"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/bad-report"));
}

}  // namespace
}  // namespace troupe::testing
