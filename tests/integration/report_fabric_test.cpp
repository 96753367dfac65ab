// `troupe report` on runs with a fabric (docs/report.md, docs/network.md): a run with links.csv
// gets the link-utilisation heat-map and the contention slowdown CDF, and its network figures in
// the comparison table; a run without a fabric gets none of them; a sweep's runs share one CDF;
// a malformed links.csv gets one line naming it. The fabric runs are made here: 16 servers of 2
// GPUs (so that jobs of 4 and 8 GPUs span servers) on 10 Gb/s NICs, 200 jobs, in well under a
// second. Skipped where python3 with matplotlib and pandas is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "tests/integration/plotting.hpp"
#include "tests/integration/report_checks.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kSmallFabric = {
    "--set", "cluster.servers[0].gpus=2",          "--set", "workload.generator.num_jobs=200",
    "--set", "workload.generator.jobs_per_hour=4", "--set", "run.measure_first_job=0",
    "--set", "run.measure_last_job=199",           "--set", "fabric.server_nic_gbps=10"};

// The number after `"key": ` in summary.json, as written.
std::string SummaryField(const std::string& summary, const std::string& key) {
  std::smatch match;
  if (!std::regex_search(summary, match, std::regex("\"" + key + "\": ([-0-9.e+]+)"))) return "?";
  return match[1];
}

class ReportFabric : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = WhyPlottingIsMissing(); !why.empty()) GTEST_SKIP() << why;
    dir_ = FreshDir("report-fabric");
  }

  std::string FabricRun(const std::string& name) {
    const std::string out = dir_ + "/" + name;
    std::vector<std::string> args = {"run", SourcePath("configs/fabric-128-4to1.textproto"),
                                     "--out", out, "--quiet"};
    args.insert(args.end(), kSmallFabric.begin(), kSmallFabric.end());
    ProcessResult r = RunTroupe(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out;
  }

  std::string dir_;
};

TEST_F(ReportFabric, ARunWithLinksCsvGetsTheHeatMapTheCdfAndItsNetworkFigures) {
  const std::string run = FabricRun("fabric");
  const std::string summary = ReadFile(run + "/summary.json");
  ASSERT_NE(SummaryField(summary, "contention_hours"), "0") << "the run shows no contention";
  ProcessResult r = RunTroupe({"report", run});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string out = run + "/report";
  const std::vector<std::string> expected = {"contention_cdf.png", "fabric-allocation.png",
                                             "fabric-links.png", "jct_cdf.png"};
  ASSERT_EQ(Pngs(out), expected);
  const std::string html = ReadFile(out + "/report.html");
  for (const std::string& png : expected) {
    ExpectGoodPng(out + "/" + png);
    EXPECT_TRUE(Embeds(html, out + "/" + png)) << png << " is not embedded";
  }
  // The heat-map's rows are the links that carried traffic: those named in links.csv.
  std::set<std::string> links;
  for (const auto& row : ReadCsv(run + "/links.csv")) links.insert(row.at("link"));
  ASSERT_GT(links.size(), 2u);
  EXPECT_NE(html.find("the " + std::to_string(links.size()) + " links that carried traffic"),
            std::string::npos);
  // The CDF leads with the comparison table, before the run's own section.
  const size_t contention = html.find("<h2>Network contention</h2>");
  ASSERT_NE(contention, std::string::npos);
  EXPECT_LT(contention, html.find("<h2>fabric (fifo + proportional)</h2>"));
  EXPECT_NE(html.find("<tr><th>jobs that crossed the fabric</th><td class=\"num\">" +
                      SummaryField(summary, "jobs_crossing") + "</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<th>busiest_links</th>"), std::string::npos) << "the run's network block";
  // The same run gives the same report.
  ASSERT_EQ(RunTroupe({"report", run, "--out", dir_ + "/again"}).exit_code, 0);
  for (const std::string& png : expected) {
    EXPECT_EQ(ReadFile(out + "/" + png), ReadFile(dir_ + "/again/" + png)) << png;
  }
}

TEST_F(ReportFabric, ARunWithoutAFabricHasNeitherFigure) {
  const std::string plain = dir_ + "/plain", fabric = FabricRun("fabric");
  fs::copy(SourcePath("tests/data/run-small"), plain, fs::copy_options::recursive);
  ProcessResult r = RunTroupe({"report", plain});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string html = ReadFile(plain + "/report/report.html");
  EXPECT_EQ(
      Pngs(plain + "/report"),
      (std::vector<std::string>{"jct_cdf.png", "plain-allocation.png", "plain-gpu-timeline.png"}));
  for (const char* text : {"Network contention", "link utilisation", "crossed the fabric"}) {
    EXPECT_EQ(html.find(text), std::string::npos) << text;
  }
  // Beside a run on a fabric, it keeps its figures, and its network cells are empty.
  r = RunTroupe({"report", plain, fabric, "--out", dir_ + "/both"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> pngs = Pngs(dir_ + "/both");
  EXPECT_EQ(std::count(pngs.begin(), pngs.end(), "plain-links.png"), 0);
  EXPECT_EQ(std::count(pngs.begin(), pngs.end(), "fabric-links.png"), 1);
  html = ReadFile(dir_ + "/both/report.html");
  EXPECT_NE(html.find("<tr><th>jobs that crossed the fabric</th><td class=\"num\">–</td>"),
            std::string::npos);
}

// A sweep over the NIC's rate: one CDF whose lines are the sweep's combinations, and each
// combination's first run its heat-map.
TEST_F(ReportFabric, ASweepsRunsShareOneContentionCdf) {
  const std::string sweep = dir_ + "/sweep";
  std::vector<std::string> args = {"sweep",   SourcePath("configs/fabric-128-4to1.textproto"),
                                   "--over",  "fabric.server_nic_gbps=10,100",
                                   "--seeds", "1-2",
                                   "--out",   sweep,
                                   "--quiet"};
  args.insert(args.end(), kSmallFabric.begin(), kSmallFabric.end() - 2);  // the NIC is swept
  ProcessResult swept = RunTroupe(args);
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  ProcessResult r = RunTroupe({"report", sweep});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::vector<std::string> pngs = Pngs(sweep + "/report");
  EXPECT_EQ(std::count(pngs.begin(), pngs.end(), "contention_cdf.png"), 1);
  size_t heat_maps = 0;
  for (const std::string& png : pngs) heat_maps += png.ends_with("-links.png");
  EXPECT_EQ(heat_maps, 2u) << "the first seed of each NIC rate";
  EXPECT_EQ(Count(ReadFile(sweep + "/report/report.html"), "alt=\"contention slowdown CDF\""), 1u);
}

// `text` with field `index` of line `number` (1-based) replaced, or with the last field of every
// line dropped (number 0). A CSV with no quoted commas.
std::string EditCsv(const std::string& text, size_t number, size_t index,
                    const std::string& value) {
  std::istringstream in(text);
  std::string out;
  size_t at = 0;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string field; std::getline(split, field, ',');) fields.push_back(field);
    if (number == 0) fields.pop_back();
    if (++at == number) fields.at(index) = value;
    for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
    out += "\n";
  }
  return out;
}

TEST_F(ReportFabric, BadLinksCsvOrJobsCsvIsNamed) {
  const std::string run = FabricRun("bad");
  const std::string links = ReadFile(run + "/links.csv");
  WriteFile(run + "/links.csv", EditCsv(links, 3, 6, "lots"));  // utilisation
  ProcessResult r = RunTroupe({"report", run});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(run + "/links.csv:3: column \"utilisation\": \"lots\""), std::string::npos)
      << r.err;
  EXPECT_EQ(Count(r.err, "\n"), 1u) << r.err;
  EXPECT_FALSE(fs::exists(run + "/report"));

  WriteFile(run + "/links.csv", links);
  const std::string jobs = ReadFile(run + "/jobs.csv");
  ASSERT_EQ(jobs.substr(0, jobs.find('\n')).ends_with(",contention_s"), true);
  WriteFile(run + "/jobs.csv", EditCsv(jobs, 0, 0, ""));
  r = RunTroupe({"report", run});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(run + "/jobs.csv:1: missing column \"contention_s\""), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(run + "/report"));
}

}  // namespace
}  // namespace troupe::testing
