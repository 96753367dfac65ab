// A run replaying a failure trace (docs/faults.md, "Failure traces"): each row's servers go down at
// its time and take work again once its repair time is over, a switch row takes out exactly its
// rack, two runs of one trace write the same bytes, and a bad trace is one line naming its file and
// line, exit 2, nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "config/config_loader.hpp"
#include "config/config_validation.hpp"
#include "runner/cluster/run_setup.hpp"
#include "tests/integration/fault_fixture.hpp"

namespace troupe::testing {
namespace {

constexpr char kHeader[] = "time_s,component,server,repair_s\n";

// A trace file in a fresh folder, and the fault tests' config replaying it (by absolute path).
struct Replay {
  std::string dir, trace, config;
};

Replay WriteReplay(const std::string& name, const std::string& rows,
                   const std::string& extra_config = "") {
  Replay r;
  r.dir = FreshDir(name);
  r.trace = r.dir + "/failures.csv";
  WriteFile(r.trace, kHeader + rows);
  r.config = FaultTestConfig() + extra_config + "faults { failure_trace: \"" + r.trace + "\" }\n";
  return r;
}

// The run's plan, as `troupe run` makes it.
FaultPlan PlannedFaults(const std::string& text) {
  config::RunConfig cfg;
  EXPECT_TRUE(ParseConfigText(text, "test.textproto", &cfg).ok());
  EXPECT_TRUE(ValidateConfig(cfg, "test.textproto").ok());
  RunPlan plan;
  Status s = PlanRun(cfg, "test.textproto", &plan);
  EXPECT_TRUE(s.ok()) << s.message();
  return plan.faults;
}

// The round starts in which each server held a lease.
std::map<int32_t, std::vector<double>> LeasedRoundStarts(const RunResult& r) {
  std::map<int64_t, double> start;
  for (const RoundRecord& round : r.rounds) start[round.round] = round.start_s;
  std::map<int32_t, std::vector<double>> leased;
  for (const LeaseRecord& l : r.leases) leased[l.server].push_back(start.at(l.round));
  return leased;
}

TEST(FailureTraceRun, ServersGoDownAtTheTracesTimesAndComeBackAfterTheRepair) {
  const Replay replay = WriteReplay("trace-run", "7200,host,2,3600\n3600,gpu,1,1800\n");
  const FaultPlan plan = PlannedFaults(replay.config);
  ASSERT_EQ(plan.events.size(), 2u);
  RunResult r = RunConfigText(replay.config);
  const InvariantReport report = CheckFaultRun(r, plan);
  EXPECT_EQ(report.jobs_finished, 60) << "every failed server comes back";
  EXPECT_EQ(r.summary.end_reason(), "all jobs finished");
  ASSERT_EQ(r.faults.size(), 2u);
  EXPECT_EQ(r.faults[0].at_s, 3600);
  EXPECT_EQ(r.faults[0].fault, "crash server:1 @3600s restart +1800s (failure:gpu)");
  EXPECT_EQ(r.faults[0].effect, "killed server 1");
  EXPECT_EQ(r.faults[0].recovered_s, 5400);
  EXPECT_EQ(r.faults[1].at_s, 7200);
  EXPECT_EQ(r.faults[1].fault, "crash server:2 @7200s restart +3600s (failure:host)");
  EXPECT_EQ(r.faults[1].effect, "killed server 2");
  EXPECT_EQ(r.faults[1].recovered_s, 10800);
  const std::map<int32_t, std::vector<double>> leased = LeasedRoundStarts(r);
  const struct {
    int32_t server;
    double down, up;
  } outages[] = {{1, 3600, 5400}, {2, 7200, 10800}};
  for (const auto& outage : outages) {
    const int32_t server = outage.server;
    const double down = outage.down, up = outage.up;
    ASSERT_TRUE(leased.count(server));
    const std::vector<double>& starts = leased.at(server);
    EXPECT_TRUE(std::any_of(starts.begin(), starts.end(), [&](double s) { return s < down; }))
        << "server " << server << " worked before its failure";
    EXPECT_TRUE(
        std::none_of(starts.begin(), starts.end(), [&](double s) { return s >= down && s < up; }))
        << "server " << server << " took no lease while down";
    EXPECT_TRUE(std::any_of(starts.begin(), starts.end(), [&](double s) { return s >= up; }))
        << "server " << server << " took work again after its repair";
  }
}

TEST(FailureTraceRun, ASwitchRowFailsExactlyTheServersOfItsRack) {
  const Replay replay =
      WriteReplay("trace-switch", "3600,switch,3,1800\n", "fabric { servers_per_rack: 2 }\n");
  const FaultPlan plan = PlannedFaults(replay.config);
  RunResult r = RunConfigText(replay.config);
  CheckFaultRun(r, plan);
  std::set<std::string> effects;
  for (const FaultRecord& f : r.faults) {
    EXPECT_EQ(f.at_s, 3600);
    EXPECT_NE(f.fault.find("(failure:switch)"), std::string::npos) << f.fault;
    EXPECT_EQ(f.recovered_s, 5400);
    effects.insert(f.effect);
  }
  EXPECT_EQ(effects, (std::set<std::string>{"killed server 2", "killed server 3"}));
  EXPECT_EQ(r.faults.size(), 2u);
}

TEST(FailureTraceRun, TwoRunsOfOneTraceWriteTheSameBytes) {
  // The config names its trace relative to its own folder, as a shipped config does.
  const Replay replay = WriteReplay("trace-det", "5400,nic,0,900\n2000,hbm,3,4000\n");
  const std::string config = replay.dir + "/run.textproto";
  WriteFile(config, FaultTestConfig() + "faults { failure_trace: \"failures.csv\" }\n");
  const std::string a = replay.dir + "/a", b = replay.dir + "/b";
  for (const std::string& out : {a, b}) {
    ProcessResult p = RunTroupe({"run", config, "--out", out, "--quiet"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
  }
  for (const char* file : {"/jobs.csv", "/rounds.csv", "/leases.csv", "/faults.csv"}) {
    const std::string bytes_a = ReadFile(a + file);
    EXPECT_GT(bytes_a.size(), 50u) << file;
    EXPECT_TRUE(bytes_a == ReadFile(b + file)) << file << " differs between two runs";
  }
  EXPECT_NE(ReadFile(a + "/faults.csv").find("(failure:hbm)"), std::string::npos);
}

TEST(FailureTraceRun, ABadTraceIsOneLineNamingItsFileAndLineAndWritesNothing) {
  const struct {
    std::string rows, expected;
  } cases[] = {
      {"100,gpu,0,60\n100,gpu,7,60\n",
       "failures.csv:3: column 'server': server 7 is not in the "
       "cluster (servers 0..3)"},
      {"-5,gpu,0,60\n", "failures.csv:2: column 'time_s': must be in [0, 1000000000], got -5"},
      {"100,fan,0,60\n", "failures.csv:2: column 'component': unknown component 'fan'"},
  };
  for (const auto& c : cases) {
    const Replay replay = WriteReplay("trace-bad", c.rows);
    WriteFile(replay.dir + "/run.textproto", replay.config);
    const std::string out = replay.dir + "/out";
    ProcessResult p = RunTroupe({"run", replay.dir + "/run.textproto", "--out", out});
    EXPECT_EQ(p.exit_code, 2) << p.err;
    EXPECT_NE(p.err.find("faults.failure_trace: " + replay.dir + "/" + c.expected),
              std::string::npos)
        << p.err;
    EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << "bad input left a run directory";
  }
  const std::string dir = FreshDir("trace-missing");
  WriteFile(dir + "/run.textproto",
            FaultTestConfig() + "faults { failure_trace: \"nowhere.csv\" }\n");
  ProcessResult p = RunTroupe({"run", dir + "/run.textproto", "--out", dir + "/out"});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find(dir + "/nowhere.csv: cannot read"), std::string::npos) << p.err;
  EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out"));
}

}  // namespace
}  // namespace troupe::testing
