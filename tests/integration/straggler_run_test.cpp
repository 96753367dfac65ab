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

// 8 servers of 4 GPUs, two a rack (racks 0..3) whose uplinks carry half their servers' NICs;
// jobs of 6 and 16 GPUs span servers and racks.
constexpr char kSpanningJobs[] =
    "job_id,model,arrival_s,iterations,gpus\n"
    "0,gnmt,0,20000,6\n"
    "1,transformer,0,20000,6\n"
    "2,res50,0,20000,6\n"
    "3,gnmt,300,10000,16\n"
    "4,alexnet,600,20000,6\n";

std::string FabricConfig(const std::string& dir, const std::string& faults) {
  WriteFile(dir + "/trace.csv", kSpanningJobs);
  return "cluster { servers { count: 8 gpus: 4 cpus: 12 memory_gb: 250 } }\n"
         "workload { trace_file: \"" +
         dir +
         "/trace.csv\" }\n"
         "fabric { servers_per_rack: 2 server_nic_gbps: 100 tor_oversubscription: 2 }\n"
         "scheduler { policy: fifo mechanism: proportional round_s: 300 }\n"
         "run { mode: emulated seed: 1 }\n" +
         faults;
}

TEST(StragglerRun, TheWhatIfReplayWithSlowLinksIsTheRunConfiguredWithoutThem) {
  const std::string dir = FreshDir("straggler-links");
  WriteFile(dir + "/slow.csv",
            "time_s,component,server,duration_s,factor\n3000,link,2,3000,0.2\n0,link,3,900,0.5\n");
  const RunResult r = RunConfigText(FabricConfig(
      dir,
      "faults { stragglers { component { component: \"link\" mtbf_h: 1 factor_min: 0.1 "
      "factor_max: 0.4 } trace: \"" +
          dir + "/slow.csv\" what_if: true } }\n"));
  const RunResult without = RunConfigText(FabricConfig(dir, ""));
  ASSERT_EQ(r.jobs_without_stragglers.size(), 5u);
  EXPECT_EQ(JobsCsv(r.jobs_without_stragglers), JobsCsv(without.jobs));
  EXPECT_NE(JobsCsv(r.jobs), JobsCsv(without.jobs)) << "the slow links slowed something";
  const summaries::StragglerSummary& s = r.summary.stragglers();
  EXPECT_EQ(s.jobs_compared(), 5);
  EXPECT_GT(s.jobs_slowed(), 0);
  double total = 0, comm_with = 0, comm_without = 0;
  for (const JobRecord& job : r.jobs) total += job.jct_s - Job(without.jobs, job.job_id).jct_s;
  EXPECT_NEAR(s.jct_attributable_total_s(), total, 1e-6);
  EXPECT_GT(total, 0);
  for (const JobNetworkRecord& n : r.job_network) comm_with += n.comm_s;
  for (const JobNetworkRecord& n : without.job_network) comm_without += n.comm_s;
  EXPECT_GT(comm_with, comm_without) << "jobs crossing the slow uplinks communicate longer";
}

TEST(StragglerRun, LinksCsvShowsASlowUplinksCapacityForItsEpisodeOnly) {
  const std::string dir = FreshDir("straggler-links-csv");
  WriteFile(dir + "/slow.csv", "time_s,component,server,duration_s,factor\n3300,link,2,900,0.25\n");
  WriteFile(dir + "/run.textproto",
            FabricConfig(dir, "faults { stragglers { trace: \"slow.csv\" } }\n"));
  ProcessResult p = RunTroupe({"run", dir + "/run.textproto", "--out", dir + "/out", "--quiet"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  // A rack's uplink: 2 x 100 Gb/s / 2 = 100 Gb/s. The 16-GPU job crosses racks 2 and 3 from
  // 3000 s; rack 2's uplink is at 25 Gb/s in the rounds that start at 3300, 3600 and 3900.
  std::istringstream links(ReadFile(dir + "/out/links.csv"));
  std::string line;
  std::getline(links, line);
  int slowed = 0, full = 0;
  while (std::getline(links, line)) {
    std::vector<std::string> cell;
    std::istringstream fields(line);
    for (std::string c; std::getline(fields, c, ',');) cell.push_back(c);
    ASSERT_EQ(cell.size(), 9u) << line;
    if (cell[1] != "rack2.up" && cell[1] != "rack2.down") continue;
    const double start_s = std::stod(cell[2]);
    const bool in_episode = start_s >= 3300 && start_s < 4200;
    EXPECT_EQ(cell[4], in_episode ? "25.000" : "100.000") << line;
    (in_episode ? slowed : full) += 1;
    EXPECT_LE(std::stod(cell[8]), std::stod(cell[4]) + 1e-3) << "never above its capacity";
  }
  EXPECT_EQ(slowed, 6) << "three rounds, both directions";
  EXPECT_GT(full, 0);
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

TEST(StragglerRun, ABadLinkEpisodeIsOneLineExitTwoAndWritesNothing) {
  const std::string dir = FreshDir("straggler-bad-link");
  WriteFile(dir + "/link0.csv", "time_s,component,server,duration_s,factor\n0,link,0,60,0.5\n");
  WriteFile(dir + "/rack9.csv", "time_s,component,server,duration_s,factor\n0,link,9,60,0.5\n");
  const std::string trace = "faults { stragglers { trace: \"";
  const struct {
    std::string config, expected;
  } cases[] = {
      {FaultTestConfig() + trace + "link0.csv\" } }\n",
       "faults.stragglers.trace: " + dir +
           "/link0.csv:2: column 'server': a link row slows a rack's uplink (server: the rack), "
           "and the run has no fabric"},
      {FabricConfig(dir, trace + "rack9.csv\" } }\n"),
       "faults.stragglers.trace: " + dir +
           "/rack9.csv:2: column 'server': rack 9 is not in the fabric (racks 0..3)"},
      {FabricConfig(dir,
                    "faults { stragglers { component { component: \"link\" "
                    "per_gpu_hour: 0.01 } } }\n"),
       "faults.stragglers.component[0]: a link's rate is mtbf_h"},
  };
  for (const auto& c : cases) {
    WriteFile(dir + "/run.textproto", c.config);
    ProcessResult p = RunTroupe({"run", dir + "/run.textproto", "--out", dir + "/out"});
    EXPECT_EQ(p.exit_code, 2) << p.err;
    EXPECT_NE(p.err.find(c.expected), std::string::npos) << p.err;
    EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out")) << "bad input left a run directory";
  }
}

}  // namespace
}  // namespace troupe::testing
