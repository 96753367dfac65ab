// `troupe report SWEEP_DIR` compares a sweep's points over seeds (scripts/troupe_plots/sweeps.py):
// NAME-sweep.csv holds, per combination of swept values and figure, n, mean, sample standard
// deviation, min, max and the 95% confidence interval of the mean (Student's t, cut to the values
// the figure can take: never below 0); report.html shows them after the JCT CDF, and a figure per
// figure that varies, with error bars: bars for a swept name, lines for a swept number. Checked on
// a sweep.csv of known numbers and on a real sweep, whose printed table shows mean ± sd and the
// number of seeds too. Skipped where python3 with matplotlib and pandas is missing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/plotting.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

// Student's t quantiles t(0.975, df), from published tables: the 95% interval is mean ± t sd/√n.
constexpr double kT975Df1 = 12.7062047361747;
constexpr double kT975Df2 = 4.30265272974946;

class ReportSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = WhyPlottingIsMissing(); !why.empty()) GTEST_SKIP() << why;
    dir_ = FreshDir("report-sweep");
  }

  // NAME-sweep.csv's rows, keyed "value/figure" (one swept field).
  static std::map<std::string, std::map<std::string, std::string>> Spreads(
      const std::string& path, const std::string& field) {
    std::map<std::string, std::map<std::string, std::string>> out;
    for (auto& row : ReadCsv(path)) out[row.at(field) + "/" + row.at("figure")] = row;
    return out;
  }

  std::string dir_;
};

// A sweep folder written by hand around copies of the committed run: the numbers in sweep.csv
// are chosen so that every statistic is known.
TEST_F(ReportSweep, SpreadOverSeedsOfKnownNumbers) {
  const std::string sweep = dir_ + "/known";
  const std::vector<std::string> runs = {"m-p_seed-1", "m-p_seed-2", "m-p_seed-3", "m-q_seed-1",
                                         "m-q_seed-2"};
  for (const std::string& run : runs) {
    fs::create_directories(sweep + "/" + run);
    fs::copy(SourcePath("tests/data/run-small"), sweep + "/" + run, fs::copy_options::recursive);
    fs::remove(sweep + "/" + run + "/leases.csv");  // no timelines: faster, not needed here
  }
  WriteFile(sweep + "/sweep.csv",
            "scheduler.mechanism,seed,jct_mean_s,gpu_utilisation,rounds,run_dir\n"
            "p,1,36000,0.5,7,m-p_seed-1\n"
            "p,2,43200,0.6,7,m-p_seed-2\n"
            "p,3,50400,0.7,7,m-p_seed-3\n"
            "q,1,3600,0.25,7,m-q_seed-1\n"
            "q,2,10800,0.75,7,m-q_seed-2\n");
  ProcessResult r = RunTroupe({"report", sweep});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto spreads = Spreads(sweep + "/report/known-sweep.csv", "scheduler.mechanism");
  ASSERT_EQ(spreads.size(), 6u) << "2 combinations x 3 figures";
  // p: 10, 12, 14 h -> mean 12 h, sd 2 h (n - 1), CI 12 ± 4.3027 x 2/√3 h.
  const auto& p = spreads.at("p/jct_mean_s");
  EXPECT_EQ(p.at("n"), "3");
  EXPECT_DOUBLE_EQ(std::stod(p.at("mean")), 43200);
  EXPECT_NEAR(std::stod(p.at("sd")), 7200, 1e-6);
  EXPECT_DOUBLE_EQ(std::stod(p.at("min")), 36000);
  EXPECT_DOUBLE_EQ(std::stod(p.at("max")), 50400);
  const double half = kT975Df2 * 7200 / std::sqrt(3.0);
  EXPECT_NEAR(std::stod(p.at("ci95_low")), 43200 - half, 1e-4);
  EXPECT_NEAR(std::stod(p.at("ci95_high")), 43200 + half, 1e-4);
  // q: two seeds, 0.25 and 0.75 -> mean 0.5, sd √0.125, CI 0.5 ± 12.706 x 0.25 = [-2.68, 3.68]:
  // a utilisation is a share, so the interval stops at 0 and at 1.
  const auto& q = spreads.at("q/gpu_utilisation");
  EXPECT_EQ(q.at("n"), "2");
  EXPECT_NEAR(std::stod(q.at("sd")), std::sqrt(0.125), 1e-9);
  EXPECT_EQ(std::stod(q.at("ci95_low")), 0);
  EXPECT_EQ(std::stod(q.at("ci95_high")), 1);
  // q's JCT: 1 h and 3 h -> mean 2 h, sd/√2 = 1 h, CI 2 ± 12.706 h: a time's interval stops at 0.
  const auto& q_jct = spreads.at("q/jct_mean_s");
  EXPECT_EQ(std::stod(q_jct.at("ci95_low")), 0);
  EXPECT_NEAR(std::stod(q_jct.at("ci95_high")), 7200 + kT975Df1 * 3600, 1e-4);
  for (const auto& [key, row] : spreads) {
    if (!row.at("ci95_low").empty()) {
      EXPECT_GE(std::stod(row.at("ci95_low")), 0) << key;
    }
  }
  EXPECT_NEAR(std::stod(spreads.at("p/rounds").at("sd")), 0, 1e-12);

  // The figures that vary are drawn; `rounds` is the same in every run, so it is only named.
  const std::string out = sweep + "/report";
  EXPECT_TRUE(fs::exists(out + "/known-sweep-jct_mean_s.png"));
  EXPECT_TRUE(fs::exists(out + "/known-sweep-gpu_utilisation.png"));
  EXPECT_FALSE(fs::exists(out + "/known-sweep-rounds.png"));
  const std::string html = ReadFile(out + "/report.html");
  EXPECT_NE(html.find("Sweep known: spread over seeds"), std::string::npos);
  EXPECT_NE(html.find("12.00 ± 2.00"), std::string::npos) << "JCT mean in hours, mean ± sd";
  EXPECT_NE(html.find("[7.03, 16.97]"), std::string::npos) << "its 95% confidence interval";
  EXPECT_NE(html.find("[0.000, 14.706]"), std::string::npos) << "q's, cut at 0 h";
  EXPECT_NE(html.find("the same in every run: rounds = 7"), std::string::npos);
  // A mechanism is a name, not a number: one bar per mechanism, not a line between them.
  EXPECT_NE(html.find("JCT mean by mechanism, one bar per value"), std::string::npos);
}

// A swept number (a load) goes along x with a line per value of the other swept field.
TEST_F(ReportSweep, ASweptNumberIsDrawnAsLinesAlongX) {
  const std::string sweep = dir_ + "/load";
  std::string table =
      "scheduler.mechanism,workload.generator.jobs_per_hour,seed,jct_mean_s,run_dir\n";
  int i = 0;
  for (const std::string mechanism : {"p", "q"}) {
    for (const std::string load : {"4", "8"}) {
      const std::string run = "m-" + mechanism + "_j-" + load;
      fs::create_directories(sweep + "/" + run);
      fs::copy(SourcePath("tests/data/run-small"), sweep + "/" + run, fs::copy_options::recursive);
      fs::remove(sweep + "/" + run + "/leases.csv");
      table += mechanism + "," + load + ",1," + std::to_string(3600 * ++i) + "," + run + "\n";
    }
  }
  WriteFile(sweep + "/sweep.csv", table);
  ProcessResult r = RunTroupe({"report", sweep});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string html = ReadFile(sweep + "/report/report.html");
  EXPECT_NE(html.find("JCT mean by jobs_per_hour, lines over its values"), std::string::npos)
      << html.substr(0, 4000);
}

TEST_F(ReportSweep, ARealSweepGroupsItsRunsBySweptValue) {
  const std::string sweep = dir_ + "/mechanisms";
  ProcessResult swept =
      RunTroupe({"sweep", SourcePath("configs/default.textproto"), "--over",
                 "scheduler.mechanism=proportional,tune", "--seeds", "1-3", "--set",
                 "workload.generator.num_jobs=40", "--set", "run.measure_first_job=0", "--set",
                 "run.measure_last_job=39", "--out", sweep, "--quiet"});
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  // The printed table: each combination's mean ± sd over its 3 seeds.
  const auto rows = ReadCsv(sweep + "/sweep.csv");
  ASSERT_EQ(rows.size(), 6u);
  std::map<std::string, std::vector<double>> jct_h;
  for (const auto& row : rows) {
    jct_h[row.at("scheduler.mechanism")].push_back(std::stod(row.at("jct_mean_s")) / 3600);
  }
  const size_t table = swept.out.find("mean over seeds ± standard deviation");
  ASSERT_NE(table, std::string::npos) << swept.out;
  for (const auto& [mechanism, hours] : jct_h) {
    const double mean = (hours[0] + hours[1] + hours[2]) / 3;
    double squares = 0;
    for (double h : hours) squares += (h - mean) * (h - mean);
    char cell[64];
    std::snprintf(cell, sizeof cell, " %.2f ± %.2f ", mean, std::sqrt(squares / 2));
    std::string start = mechanism;
    start.resize(14, ' ');
    start += "3      ";  // seeds
    const size_t line = swept.out.find("\n" + start, table);
    ASSERT_NE(line, std::string::npos) << start << "\n" << swept.out;
    const std::string text = swept.out.substr(line + 1, swept.out.find('\n', line + 1) - line);
    EXPECT_NE(text.find(cell), std::string::npos) << cell << " in\n" << text;
  }

  ProcessResult r = RunTroupe({"report", sweep});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string out = sweep + "/report";
  const auto spreads = Spreads(out + "/mechanisms-sweep.csv", "scheduler.mechanism");
  for (const std::string mechanism : {"proportional", "tune"}) {
    const auto& row = spreads.at(mechanism + "/jct_mean_s");
    EXPECT_EQ(row.at("n"), "3") << mechanism;
    const auto& hours = jct_h[mechanism];
    EXPECT_NEAR(std::stod(row.at("mean")) / 3600, (hours[0] + hours[1] + hours[2]) / 3, 1e-6);
  }
  EXPECT_EQ(spreads.size() % 2, 0u);
  EXPECT_TRUE(fs::exists(out + "/mechanisms-sweep-jct_mean_s.png"));
  const std::string html = ReadFile(out + "/report.html");
  // The answer first: the JCT CDF, the table of the combinations, their figures, then each run.
  const size_t cdf = html.find("<h2>Job completion times");
  const size_t spread = html.find("<h2>Sweep mechanisms: spread over seeds");
  const size_t figure = html.find("mechanisms-sweep-jct_mean_s.png");
  ASSERT_NE(cdf, std::string::npos);
  EXPECT_LT(html.find("jct_cdf.png"), spread);
  EXPECT_LT(cdf, spread);
  EXPECT_LT(html.find("<table>", spread), figure) << "the table before the figures";
  EXPECT_LT(figure, html.find("<h2>mechanism-proportional_seed-1"))
      << "the comparison comes before the runs";
  // Each run's own figures for the first seed of a combination; the others say how to draw theirs.
  EXPECT_TRUE(fs::exists(out + "/mechanism-tune_seed-1-allocation.png"));
  EXPECT_FALSE(fs::exists(out + "/mechanism-tune_seed-2-allocation.png"));
  EXPECT_NE(html.find("Figures are drawn for the first seed of each combination"),
            std::string::npos);
}

// Swept values are a user's text: a quote or a line break in one is quoted in sweep.csv (and in
// the report's NAME-sweep.csv), and the report reads it back.
TEST_F(ReportSweep, SweptValuesWithQuotesAndLineBreaksReadBack) {
  const std::string sweep = dir_ + "/names";
  ProcessResult swept = RunTroupe(
      {"sweep", SourcePath("configs/default.textproto"), "--over",
       "cluster.servers[0].name=x\"y,p\nq", "--set", "workload.generator.num_jobs=20", "--set",
       "run.measure_first_job=0", "--set", "run.measure_last_job=19", "--out", sweep, "--quiet"});
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  const std::string csv = ReadFile(sweep + "/sweep.csv");
  EXPECT_EQ(csv.find("cluster.servers[0].name,seed,"), 0u) << csv;
  EXPECT_NE(csv.find("\n\"x\"\"y\","), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n\"p\nq\","), std::string::npos) << csv;
  ProcessResult r = RunTroupe({"report", sweep});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string spreads = ReadFile(sweep + "/report/names-sweep.csv");
  EXPECT_NE(spreads.find("\n\"x\"\"y\",jct_mean_s,1,"), std::string::npos) << spreads;
  EXPECT_NE(spreads.find("\n\"p\nq\",jct_mean_s,1,"), std::string::npos) << spreads;
}

TEST_F(ReportSweep, AFigureThatIsNotANumberIsNamedWithItsLine) {
  const std::string sweep = dir_ + "/bad";
  fs::create_directories(sweep + "/m-p_seed-1");
  fs::copy(SourcePath("tests/data/run-small"), sweep + "/m-p_seed-1", fs::copy_options::recursive);
  WriteFile(sweep + "/sweep.csv",
            "scheduler.mechanism,seed,jct_mean_s,run_dir\np,1,lots,m-p_seed-1\n");
  ProcessResult r = RunTroupe({"report", sweep});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "troupe report: " + sweep + "/sweep.csv:2: column \"jct_mean_s\": \"lots\" " +
                       "is not a number\n");
  EXPECT_FALSE(fs::exists(sweep + "/report"));
}

}  // namespace
}  // namespace troupe::testing
