// Stragglers in a run (docs/failures.md, "Stragglers"): a slow server slows the whole synchronous
// job leased on it and no job elsewhere; the what-if replay is exactly a run configured without
// the stragglers; stragglers.csv and summary.json say what they cost; bad input is one line, exit
// 2, nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "runner/cluster/report_writer.hpp"
#include "runner/cluster/straggler_what_if.hpp"
#include "tests/integration/fault_fixture.hpp"

namespace troupe::testing {
namespace {

// Three servers of 4 GPUs; an 8-GPU job spans two of them, a 4-GPU job takes the third.
constexpr char kJobs[] =
    "job_id,model,arrival_s,iterations,gpus\n"
    "0,alexnet,0,1000,8\n"
    "1,alexnet,0,1000,4\n";

std::string ThreeServers(const std::string& dir, const std::string& faults) {
  WriteFile(dir + "/trace.csv", kJobs);
  return "cluster { servers { count: 3 gpus: 4 cpus: 12 memory_gb: 250 } }\n"
         "workload { trace_file: \"" +
         dir + "/trace.csv\" }\nrun { lease_log: true }\n" + faults;
}

std::set<int32_t> ServersOf(const RunResult& r, int64_t job) {
  std::set<int32_t> servers;
  for (const LeaseRecord& l : r.leases) {
    if (l.job_id == job) servers.insert(l.server);
  }
  return servers;
}

const JobRecord& Job(const std::vector<JobRecord>& jobs, int64_t id) {
  return *std::find_if(jobs.begin(), jobs.end(),
                       [id](const JobRecord& j) { return j.job_id == id; });
}

TEST(StragglerRun, ASlowGpuSlowsItsWholeSynchronousJobAndOnlyJobsOnItsServer) {
  const std::string dir = FreshDir("straggler-gang");
  const RunResult plain = RunConfigText(ThreeServers(dir, ""));
  const std::set<int32_t> gang = ServersOf(plain, 0);
  ASSERT_EQ(gang.size(), 2u) << "the 8-GPU job spans two servers";
  const int32_t slow = *gang.begin();
  WriteFile(dir + "/slow.csv", "time_s,component,server,duration_s,factor\n1,gpu," +
                                   std::to_string(slow) + ",1000000,0.5\n");
  const RunResult r = RunConfigText(ThreeServers(
      dir, "faults { stragglers { trace: \"" + dir + "/slow.csv\" what_if: true } }\n"));
  ASSERT_EQ(r.jobs.size(), 2u);
  ASSERT_EQ(r.jobs_without_stragglers.size(), 2u);
  EXPECT_EQ(ServersOf(r, 0), gang);
  EXPECT_EQ(ServersOf(r, 1).count(slow), 0u);
  // Alexnet at the proportional share: 500 iterations a 300 s round, 1000 in two rounds. Slow
  // from 1 s on one of its two servers, the whole gang job runs at half speed from the second
  // round (a lease runs at the speed its server had when it started): 500 + 250 + 250.
  const double with = Job(r.jobs, 0).jct_s, without = Job(r.jobs_without_stragglers, 0).jct_s;
  EXPECT_EQ(without, Job(plain.jobs, 0).jct_s);
  EXPECT_EQ(without, 600);
  EXPECT_EQ(with, 900);
  EXPECT_EQ(Job(r.jobs, 1).jct_s, Job(r.jobs_without_stragglers, 1).jct_s)
      << "a job on another server is not slowed";
  EXPECT_EQ(r.summary.stragglers().jobs_slowed(), 1);
  EXPECT_DOUBLE_EQ(r.summary.stragglers().jct_attributable_total_s(), with - without);
  EXPECT_DOUBLE_EQ(r.summary.stragglers().jct_attributable_mean_s(), (with - without) / 2);
  // Its 8 GPUs held 300 s longer.
  EXPECT_DOUBLE_EQ(r.summary.stragglers().gpu_hours_attributable(), 8 * 300.0 / 3600);
}

constexpr char kCrash[] = "fault { kind: crash target: \"server:1\" at_s: 20000 duration_s: 3600 }";
constexpr char kDrawn[] =
    "stragglers { component { component: \"gpu\" per_gpu_hour: 0.002 } "
    "component { component: \"host\" mtbf_h: 200 factor_min: 0.3 factor_max: 0.6 } "
    "what_if: true }";

TEST(StragglerRun, TheWhatIfReplayIsTheRunConfiguredWithoutThem) {
  const RunResult r =
      RunConfigText(FaultTestConfig() + "faults { " + kCrash + " " + kDrawn + " }\n");
  const RunResult without = RunConfigText(FaultTestConfig() + "faults { " + kCrash + " }\n");
  ASSERT_EQ(r.jobs_without_stragglers.size(), 60u);
  EXPECT_EQ(JobsCsv(r.jobs_without_stragglers), JobsCsv(without.jobs));
  EXPECT_NE(JobsCsv(r.jobs), JobsCsv(without.jobs)) << "the stragglers slowed something";
  const summaries::StragglerSummary& s = r.summary.stragglers();
  const auto applied = std::count_if(r.faults.begin(), r.faults.end(), [](const FaultRecord& f) {
    return f.fault.find("(straggler:") != std::string::npos;
  });
  EXPECT_GT(applied, 3);
  EXPECT_EQ(s.slow_faults(), applied);
  EXPECT_EQ(s.jobs_compared(), 60);
  EXPECT_GT(s.jobs_slowed(), 0);
  double total = 0;
  for (const JobRecord& job : r.jobs) total += job.jct_s - Job(without.jobs, job.job_id).jct_s;
  EXPECT_NEAR(s.jct_attributable_total_s(), total, 1e-6);
  EXPECT_NEAR(s.jct_mean_with_s() - s.jct_mean_without_s(), s.jct_attributable_mean_s(), 1e-6);
}

// One CSV column, by its header name, row by row.
std::vector<std::string> Column(const std::string& csv, const std::string& name) {
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  std::vector<std::string> header, out;
  std::istringstream cells(line);
  for (std::string cell; std::getline(cells, cell, ',');) header.push_back(cell);
  const size_t at = std::find(header.begin(), header.end(), name) - header.begin();
  while (std::getline(lines, line)) {
    std::vector<std::string> row;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) row.push_back(cell);
    out.push_back(at < row.size() ? row[at] : "");
  }
  return out;
}

TEST(StragglerRun, StragglersCsvHoldsEachJobsJctWithAndWithoutThem) {
  // A relative trace is taken from the config's folder.
  const std::string dir = FreshDir("straggler-csv");
  WriteFile(dir + "/slow.csv",
            "time_s,component,server,duration_s,factor\n3600,host,2,20000,0.4\n0,gpu,0,9000,0.7\n");
  WriteFile(dir + "/with.textproto",
            FaultTestConfig() + "faults { stragglers { trace: \"slow.csv\" what_if: true } }\n");
  WriteFile(dir + "/without.textproto", FaultTestConfig());
  for (const char* name : {"with", "without"}) {
    ProcessResult p =
        RunTroupe({"run", dir + "/" + name + ".textproto", "--out", dir + "/" + name, "--quiet"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
  }
  const std::string csv = ReadFile(dir + "/with/stragglers.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), kStragglersCsvHeader);
  const std::string jobs_with = ReadFile(dir + "/with/jobs.csv");
  const std::string jobs_without = ReadFile(dir + "/without/jobs.csv");
  EXPECT_EQ(Column(csv, "job_id"), Column(jobs_with, "job_id"));
  EXPECT_EQ(Column(csv, "jct_s"), Column(jobs_with, "jct_s"));
  EXPECT_EQ(Column(csv, "jct_without_stragglers_s"), Column(jobs_without, "jct_s"));
  EXPECT_NE(Column(jobs_with, "jct_s"), Column(jobs_without, "jct_s"));
  const std::string summary = ReadFile(dir + "/with/summary.json");
  EXPECT_NE(summary.find("\"jct_attributable_total_s\""), std::string::npos) << summary;
  EXPECT_EQ(ReadFile(dir + "/without/summary.json").find("stragglers"), std::string::npos);
  EXPECT_NE(ReadFile(dir + "/with/faults.csv").find("(straggler:host)"), std::string::npos);
}

TEST(StragglerRun, BadInputIsOneLineExitTwoAndWritesNothing) {
  const std::string dir = FreshDir("straggler-bad");
  WriteFile(dir + "/slow.csv", "time_s,component,server,duration_s,factor\n0,gpu,9,60,0.5\n");
  const struct {
    std::string faults, expected;
  } cases[] = {
      {"stragglers { trace: \"slow.csv\" }",
       "faults.stragglers.trace: " + dir +
           "/slow.csv:2: column 'server': server 9 is not in the cluster (servers 0..3)"},
      {"stragglers { component { component: \"link\" mtbf_h: 100 } }",
       "faults.stragglers.component[0]: a link straggler slows a rack's uplink, and the run has "
       "no fabric"},
      {"stragglers { component { component: \"gpu\" mtbf_h: 100 factor_min: 0.9 factor_max: 0.5 "
       "} }",
       "faults.stragglers.component[0].factor_min: 0.9 is above factor_max 0.5"},
  };
  for (const auto& c : cases) {
    WriteFile(dir + "/run.textproto", FaultTestConfig() + "faults { " + c.faults + " }\n");
    ProcessResult p = RunTroupe({"run", dir + "/run.textproto", "--out", dir + "/out"});
    EXPECT_EQ(p.exit_code, 2) << p.err;
    EXPECT_NE(p.err.find(c.expected), std::string::npos) << p.err;
    EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out")) << "bad input left a run directory";
  }
}

}  // namespace
}  // namespace troupe::testing
