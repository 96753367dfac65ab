// `troupe report` (apps/report_command.hpp, scripts/plot.py) on the committed run directory
// tests/data/run-small (300 jobs, 128 GPUs, with leases.csv; docs/report.md says how it was made):
// every figure is a real PNG, report.html embeds them all, two runs share one JCT CDF, output is
// deterministic, and a malformed run directory gets one line naming the file, exit status 2 and no
// report. Skipped where python3 with matplotlib and pandas is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>

#include "tests/integration/plotting.hpp"
#include "tests/integration/report_checks.hpp"
#include "tests/integration/run_fixture.hpp"
#include "tests/support/scoped_env.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

// `text` without the column at `index` on every line (a CSV with no quoted commas).
std::string DropColumn(const std::string& text, size_t index) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string field; std::getline(split, field, ',');) fields.push_back(field);
    fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(index));
    for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
    out += "\n";
  }
  return out;
}

// `text` with its line `number` (1-based) replaced.
std::string ReplaceLine(const std::string& text, size_t number, const std::string& line) {
  size_t begin = 0;
  for (size_t i = 1; i < number; ++i) begin = text.find('\n', begin) + 1;
  return text.substr(0, begin) + line + text.substr(text.find('\n', begin));
}

class Report : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = WhyPlottingIsMissing(); !why.empty()) GTEST_SKIP() << why;
    dir_ = FreshDir("report");
  }

  // A copy of the committed run under the test's folder, so that reports never land in the
  // source tree.
  std::string CopyRun(const std::string& name, const std::string& source = "run-small") {
    const std::string copy = dir_ + "/" + name;
    fs::copy(SourcePath("tests/data/" + source), copy, fs::copy_options::recursive);
    return copy;
  }

  // Changes one file of a fresh copy (nullopt: removes it) and checks the bad-input contract;
  // returns stderr.
  std::string ReportOnBrokenRun(
      const std::string& file,
      const std::function<std::optional<std::string>(const std::string&)>& change,
      const std::string& source = "run-small") {
    const std::string run = CopyRun("broken-" + std::to_string(++broken_), source);
    const std::string path = run + "/" + file;
    if (std::optional<std::string> changed = change(ReadFile(path))) {
      WriteFile(path, *changed);
    } else {
      fs::remove(path);
    }
    ProcessResult r = RunTroupe({"report", run});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(Count(r.err, "\n"), 1u) << r.err;
    EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << "the error names " << path << ": " << r.err;
    EXPECT_FALSE(fs::exists(run + "/report")) << "bad input left a report";
    for (const auto& entry : fs::directory_iterator(run)) {
      EXPECT_EQ(entry.path().filename().string().find(".report"), std::string::npos)
          << "a staging folder was left behind: " << entry.path();
    }
    return r.err;
  }

  std::string dir_;
  int broken_ = 0;
};

TEST_F(Report, DrawsEveryFigureAndEmbedsThemInOneHtmlPage) {
  const std::string run = CopyRun("run-small");
  ProcessResult r = RunTroupe({"report", run});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string out = run + "/report";
  EXPECT_NE(r.out.find("report: " + out + "/report.html"), std::string::npos) << r.out;
  const std::vector<std::string> expected = {"jct_cdf.png", "run-small-allocation.png",
                                             "run-small-gpu-timeline.png"};
  ASSERT_EQ(Pngs(out), expected);
  const std::string html = ReadFile(out + "/report.html");
  EXPECT_EQ(Count(html, "src=\"data:image/png;base64,"), expected.size());
  for (const std::string& png : expected) {
    ExpectGoodPng(out + "/" + png);
    EXPECT_NE(html.find("base64," + Base64(ReadFile(out + "/" + png)) + "\""), std::string::npos)
        << png << " is not embedded";
  }
  EXPECT_EQ(html.find("src=\"" + expected[0]), std::string::npos) << "links, not embeds";
  EXPECT_NE(html.find("run-small (fifo + proportional)"), std::string::npos);
  EXPECT_NE(html.find("<th>jobs_total</th><td>300</td>"), std::string::npos) << "summary table";
  EXPECT_NE(html.find("128 GPUs, 384 CPUs, 8000 GB"), std::string::npos) << "derived capacity";
  // GPU-proportional: CPUs and memory follow GPUs, so one panel, said once.
  EXPECT_NE(html.find("so one panel shows all three"), std::string::npos);
}

// `troupe report SWEEP_DIR` draws the sweep's runs in the sweep's order (sweep.csv's run_dir),
// not the alphabet's.
TEST_F(Report, ASweepFolderStandsForItsRunsInTheSweepsOrder) {
  const std::string sweep = dir_ + "/sweep";
  ProcessResult swept = RunTroupe(
      {"sweep", SourcePath("configs/default.textproto"), "--over",
       "scheduler.mechanism=tune,proportional", "--set", "workload.generator.num_jobs=40", "--set",
       "run.measure_first_job=0", "--set", "run.measure_last_job=39", "--out", sweep, "--quiet"});
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  const auto rows = ReadCsv(sweep + "/sweep.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("run_dir"), "mechanism-tune_seed-1");
  ProcessResult r = RunTroupe({"report", sweep});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string html = ReadFile(sweep + "/report/report.html");
  const size_t tune = html.find("<h2>mechanism-tune_seed-1");
  const size_t proportional = html.find("<h2>mechanism-proportional_seed-1");
  ASSERT_NE(tune, std::string::npos) << html.substr(0, 2000);
  ASSERT_NE(proportional, std::string::npos);
  EXPECT_LT(tune, proportional);
}

// A run small enough for text on its GPU timeline: the widest bars carry their job id; a GREEDY
// run's CPUs and memory do not follow its GPUs, so each keeps its panel.
TEST_F(Report, SmallTimelinesNameTheirJobs) {
  std::string config = ReadFile(SourcePath("configs/default.textproto"));
  for (auto [from, to] : {std::pair<std::string, std::string>{"count: 16", "count: 2"},
                          {"jobs_per_hour: 9", "jobs_per_hour: 1"},
                          {"num_jobs: 0", "num_jobs: 60"}}) {
    ASSERT_NE(config.find(from), std::string::npos) << from;
    config.replace(config.find(from), from.size(), to);
  }
  WriteFile(dir_ + "/small.textproto", config);
  const std::string run = dir_ + "/small";
  ProcessResult made =
      RunTroupe({"run", dir_ + "/small.textproto", "--quiet", "--out", run, "--set",
                 "run.measure_first_job=0", "--set", "run.measure_last_job=59", "--set",
                 "run.lease_log=true", "--set", "scheduler.mechanism=greedy"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  ProcessResult r = RunTroupe({"report", run});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string html = ReadFile(run + "/report/report.html");
  EXPECT_NE(html.find("widest bars carry their job id"), std::string::npos);
  EXPECT_EQ(html.find("so one panel shows all three"), std::string::npos);
}

TEST_F(Report, TwoRunsShareOneCdfAndTheOutputIsDeterministic) {
  const std::string first = CopyRun("proportional"), second = CopyRun("again");
  for (const std::string& out : {dir_ + "/one", dir_ + "/two"}) {
    ProcessResult r = RunTroupe({"report", first, second, "--out", out});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  const std::vector<std::string> expected = {"again-allocation.png", "again-gpu-timeline.png",
                                             "jct_cdf.png", "proportional-allocation.png",
                                             "proportional-gpu-timeline.png"};
  ASSERT_EQ(Pngs(dir_ + "/one"), expected);
  for (const std::string& png : expected) {
    ExpectGoodPng(dir_ + "/one/" + png);
    EXPECT_EQ(ReadFile(dir_ + "/one/" + png), ReadFile(dir_ + "/two/" + png)) << png;
  }
  const std::string html = ReadFile(dir_ + "/one/report.html");
  EXPECT_EQ(html, ReadFile(dir_ + "/two/report.html"));
  EXPECT_EQ(Count(html, "src=\"data:image/png;base64,"), expected.size());
  // Both runs are in the comparison table under the CDF and have their own sections.
  EXPECT_EQ(Count(html, "proportional (fifo + proportional)"), 2u) << "table header and h2";
  EXPECT_EQ(Count(html, "again (fifo + proportional)"), 2u);
}

TEST_F(Report, ReplacesAnEarlierReportButNeverARunDirectoryOrAUsersFile) {
  const std::string run = CopyRun("run-small");
  ASSERT_EQ(RunTroupe({"report", run}).exit_code, 0);
  ProcessResult r = RunTroupe({"report", run});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteFile(run + "/report/mine.png", "added by hand");
  r = RunTroupe({"report", run});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not written by troupe"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(run + "/report/mine.png"), "added by hand");
  r = RunTroupe({"report", run, "--out", run});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("run directory"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(run + "/jobs.csv"));
}

TEST_F(Report, WithoutLeasesCsvItSaysWhyThereIsNoTimeline) {
  const std::string run = CopyRun("no-leases");
  fs::remove(run + "/leases.csv");
  ProcessResult r = RunTroupe({"report", run});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Pngs(run + "/report"),
            (std::vector<std::string>{"jct_cdf.png", "no-leases-allocation.png"}));
  const std::string note = "leases.csv is absent (the run was made without run.lease_log";
  EXPECT_NE(ReadFile(run + "/report/report.html").find(note), std::string::npos);
  EXPECT_NE(r.out.find(note), std::string::npos) << r.out;
}

TEST_F(Report, SkipsARunOfAnUnknownTypeWithANote) {
  const std::string run = CopyRun("run-small"), other = dir_ + "/ps";
  fs::create_directories(other);
  WriteFile(other + "/summary.json", "{\"run_type\": \"simulation\"}\n");
  ProcessResult r = RunTroupe({"report", run, other, "--out", dir_ + "/out"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFile(dir_ + "/out/report.html").find("Skipped: unknown run type"),
            std::string::npos);
  EXPECT_EQ(Pngs(dir_ + "/out").size(), 3u);
}

TEST_F(Report, MissingFileIsNamed) {
  auto remove = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  ReportOnBrokenRun("rounds.csv", remove);
  ReportOnBrokenRun("summary.json", remove);
  ReportOnBrokenRun("jobs.csv", remove);
}

TEST_F(Report, TruncatedJsonIsNamedWithItsLine) {
  const std::string err = ReportOnBrokenRun(
      "summary.json", [](const std::string& text) { return text.substr(0, 200); });
  EXPECT_NE(err.find("summary.json:"), std::string::npos) << err;
}

TEST_F(Report, CsvWithAMissingColumnIsNamed) {
  const std::string err = ReportOnBrokenRun(
      "jobs.csv", [](const std::string& text) { return DropColumn(text, 7); });  // jct_s
  EXPECT_NE(err.find("jobs.csv:1: missing column \"jct_s\""), std::string::npos) << err;
}

TEST_F(Report, NonNumberIsNamedWithItsLine) {
  const std::string err = ReportOnBrokenRun("rounds.csv", [](const std::string& text) {
    return ReplaceLine(text, 5, "3,10800.000,14400.000,lots,0.000,0.000,0,0,0");
  });
  EXPECT_NE(err.find("rounds.csv:5: column \"gpus_allocated\""), std::string::npos) << err;
}

TEST_F(Report, TruncatedCsvIsNamed) {
  // Cut inside a line, and cut at a line boundary (only the row count against summary.json's
  // shows that one).
  ReportOnBrokenRun("leases.csv",
                    [](const std::string& text) { return text.substr(0, text.size() / 2); });
  const std::string err = ReportOnBrokenRun("jobs.csv", [](const std::string& text) {
    return text.substr(0, text.rfind('\n', text.size() / 2) + 1);
  });
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;
}

// Draws one run of a new type and checks its figures: good PNGs, each embedded once.
void ExpectRunFigures(const std::string& run, const std::vector<std::string>& expected,
                      const std::vector<std::string>& in_html) {
  ProcessResult r = RunTroupe({"report", run});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string out = run + "/report";
  ASSERT_EQ(Pngs(out), expected);
  const std::string html = ReadFile(out + "/report.html");
  EXPECT_EQ(Count(html, "src=\"data:image/png;base64,"), expected.size());
  for (const std::string& png : expected) {
    ExpectGoodPng(out + "/" + png);
    EXPECT_NE(html.find("base64," + Base64(ReadFile(out + "/" + png)) + "\""), std::string::npos)
        << png << " is not embedded";
  }
  for (const std::string& text : in_html) EXPECT_NE(html.find(text), std::string::npos) << text;
  EXPECT_EQ(html.find("Job completion times"), std::string::npos) << "no scheduler run";
}

TEST_F(Report, DrawsAParameterServerRun) {
  ExpectRunFigures(CopyRun("ps-small", "ps-small"),
                   {"ps-small-ps-hit-rates.png", "ps-small-ps-loss.png", "ps-small-ps-stages.png"},
                   {"ps-small (parameter server, 4 nodes)", "<th>batches</th><td>60</td>"});
}

TEST_F(Report, DrawsAnOasisRun) {
  ExpectRunFigures(
      CopyRun("oasis-small", "oasis-small"),
      {"oasis-small-oasis-jobs.png", "oasis-small-oasis-prices.png",
       "oasis-small-oasis-utilisation.png"},
      {"oasis-small (OASiS, policy oasis)", "<th>total_utility</th><td>11,146.8</td>",
       // Prices reach 1e-300: the figure shows their top six decades, the rest as the floor.
       "on a log scale from 1e-04 to the highest price, 98.3"});
}

// Every figure of every run type, with Python's warnings all shown: none is printed.
TEST_F(Report, MixesEveryRunTypeInOneReport) {
  const std::string out = dir_ + "/all";
  ScopedEnv warnings("PYTHONWARNINGS", "always");
  ProcessResult r = RunTroupe({"report", CopyRun("run-small"), CopyRun("ps", "ps-small"),
                               CopyRun("oasis", "oasis-small"), "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "") << "numpy, pandas or matplotlib warned";
  EXPECT_EQ(Pngs(out).size(), 9u);
  EXPECT_EQ(Count(ReadFile(out + "/report.html"), "src=\"data:image/png;base64,"), 9u);
}

TEST_F(Report, BadParameterServerOrOasisInputIsNamed) {
  ReportOnBrokenRun(
      "batches.csv", [](const std::string& text) { return DropColumn(text, 1); }, "ps-small");
  std::string err = ReportOnBrokenRun(
      "batches.csv",
      [](const std::string& text) { return text.substr(0, text.rfind('\n', text.size() / 2) + 1); },
      "ps-small");
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;
  err = ReportOnBrokenRun(
      "slots.csv", [](const std::string& text) { return ReplaceLine(text, 4, "2,x,0,0"); },
      "oasis-small");
  EXPECT_NE(err.find("slots.csv:4: column \"active\""), std::string::npos) << err;
  ReportOnBrokenRun(
      "slots.csv", [](const std::string&) -> std::optional<std::string> { return std::nullopt; },
      "oasis-small");
  ReportOnBrokenRun(
      "summary.json", [](const std::string& text) { return text.substr(0, 100); }, "oasis-small");
}

}  // namespace
}  // namespace troupe::testing
