// Failure traces (faults/failure_trace.hpp, docs/faults.md "Failure traces"): each row is the
// crash a failure model's failure of its component would be, a switch row takes out its rack, the
// order of the rows does not change the plan, a trace joins a failure model's draws in one plan,
// and every kind of bad input is one line naming the file, the line and the column.
#include "faults/failure_trace.hpp"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/unit/scoped_temp_dir.hpp"

namespace troupe {
namespace {

constexpr char kHeader[] = "time_s,component,server,repair_s\n";

FaultUniverse Servers(int64_t servers) {
  FaultUniverse u;
  u.servers = servers;
  u.gpus_of_server.assign(static_cast<size_t>(servers), 8);
  return u;
}

std::vector<std::string> Parsed(const std::string& text, const FaultUniverse& u) {
  std::vector<FaultEvent> events;
  Status s = ParseFailureTrace(text, "f.csv", u, &events);
  EXPECT_TRUE(s.ok()) << s.message();
  std::vector<std::string> out;
  for (const FaultEvent& e : events) out.push_back(e.Describe());
  return out;
}

std::string Refusal(const std::string& body, int64_t servers = 4) {
  std::vector<FaultEvent> events;
  Status s = ParseFailureTrace(body, "f.csv", Servers(servers), &events);
  EXPECT_FALSE(s.ok()) << body;
  EXPECT_TRUE(events.empty()) << "nothing is appended from a refused trace";
  EXPECT_EQ(s.message().find('\n'), std::string::npos) << "one line";
  return s.message();
}

TEST(FailureTrace, EachRowCrashesItsServerAndRestartsItAfterTheRepair) {
  const std::vector<std::string> got = Parsed(std::string(kHeader) +
                                                  "3600,gpu,2,1800\n"
                                                  "7200.5,hbm,0,60\n"
                                                  "9000,host,3,0\n"
                                                  "9000,nic,1,10\n",
                                              Servers(4));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "crash server:2 @3600s restart +1800s (failure:gpu)",
                     "crash server:0 @7200.5s restart +60s (failure:hbm)",
                     "crash server:1 @9000s restart +10s (failure:nic)",
                     "crash server:3 @9000s (failure:host)",
                 }));
}

TEST(FailureTrace, ARepairTimeOfZeroLosesTheServerForGood) {
  FaultPlan plan;
  ASSERT_TRUE(ParseFailureTrace(std::string(kHeader) + "100,host,3,0\n200,gpu,1,50\n", "f.csv",
                                Servers(4), &plan.events)
                  .ok());
  EXPECT_EQ(plan.ServersLostForGood(4), std::vector<int64_t>{3});
}

TEST(FailureTrace, TheOrderOfRowsAndColumnsDoesNotChangeThePlan) {
  const std::vector<std::string> sorted = Parsed(std::string(kHeader) +
                                                     "10,gpu,0,5\n"
                                                     "10,host,0,5\n"
                                                     "10,gpu,2,5\n"
                                                     "20,gpu,1,7\n",
                                                 Servers(4));
  EXPECT_EQ(Parsed(std::string(kHeader) + "20,gpu,1,7\n"
                                          "10,gpu,2,5\n"
                                          "10,host,0,5\n"
                                          "10,gpu,0,5\n",
                   Servers(4)),
            sorted);
  EXPECT_EQ(Parsed("server,repair_s,time_s,component\n"
                   "# comments and blank lines are skipped\n"
                   "\n"
                   "2,5,10,gpu\n0,5,10,host\n1,7,20,gpu\n0,5,10,gpu\n",
                   Servers(4)),
            sorted);
}

TEST(FailureTrace, ASwitchRowTakesOutTheRackItsServerHangsUnder) {
  FaultUniverse u = Servers(6);
  u.rack_of_server = {0, 0, 0, 1, 1, 1};
  std::vector<FaultEvent> events;
  ASSERT_TRUE(
      ParseFailureTrace(std::string(kHeader) + "500,switch,4,900\n", "f.csv", u, &events).ok());
  std::vector<int64_t> hit;
  for (const FaultEvent& e : events) {
    EXPECT_EQ(e.at_s, 500);
    EXPECT_EQ(e.duration_s, 900);
    EXPECT_EQ(e.cause, "failure:switch");
    EXPECT_EQ(e.target.first, e.target.last);
    hit.push_back(e.target.first);
  }
  EXPECT_EQ(hit, (std::vector<int64_t>{3, 4, 5}));
  // Without a fabric a switch stands for one server's link, as in a failure model.
  EXPECT_EQ(Parsed(std::string(kHeader) + "500,switch,4,900\n", Servers(6)),
            std::vector<std::string>{"crash server:4 @500s restart +900s (failure:switch)"});
}

TEST(FailureTrace, AHeaderAloneHasNoFailures) {
  EXPECT_TRUE(Parsed(kHeader, Servers(4)).empty());
  EXPECT_TRUE(Parsed("# a quiet month\ntime_s,component,server,repair_s", Servers(0)).empty());
}

TEST(FailureTrace, EveryKindOfBadInputNamesTheFileLineAndColumn) {
  const std::string h = kHeader;
  EXPECT_EQ(Refusal(""),
            "f.csv: empty failure trace; its first line is the header "
            "time_s,component,server,repair_s");
  EXPECT_EQ(Refusal("time_s,component,server\n1,gpu,0\n"),
            "f.csv:1: header has no column 'repair_s' (found: time_s,component,server)");
  EXPECT_EQ(Refusal("100,gpu,0,60\n"),
            "f.csv:1: header has no column 'time_s' (found: 100,gpu,0,60)");
  EXPECT_EQ(Refusal("time_s,component,server,repair_s,rack\n1,gpu,0,5,0\n"),
            "f.csv:1: header has 5 columns; a failure trace has exactly "
            "time_s,component,server,repair_s (found: time_s,component,server,repair_s,rack)");
  EXPECT_EQ(Refusal(h + "1,gpu,0,5\n2,gpu,0\n"), "f.csv:3: expected 4 columns, found 3");
  EXPECT_EQ(Refusal(h + "2,gpu,0,5,6\n"), "f.csv:2: expected 4 columns, found 5");
  EXPECT_EQ(Refusal(h + "soon,gpu,0,5\n"), "f.csv:2: column 'time_s': not a number: 'soon'");
  EXPECT_EQ(Refusal(h + "inf,gpu,0,5\n"), "f.csv:2: column 'time_s': not a number: 'inf'");
  EXPECT_EQ(Refusal(h + "nan,gpu,0,5\n"), "f.csv:2: column 'time_s': not a number: 'nan'");
  EXPECT_EQ(Refusal(h + "-1,gpu,0,5\n"),
            "f.csv:2: column 'time_s': must be in [0, 1000000000], got -1");
  EXPECT_EQ(Refusal(h + "1e10,gpu,0,5\n"),
            "f.csv:2: column 'time_s': must be in [0, 1000000000], got 1e10");
  EXPECT_EQ(Refusal(h + "1,fan,0,5\n"),
            "f.csv:2: column 'component': unknown component 'fan' (gpu, hbm, host, nic, switch)");
  EXPECT_EQ(Refusal(h + "1,GPU,0,5\n"),
            "f.csv:2: column 'component': unknown component 'GPU' (gpu, hbm, host, nic, switch)");
  EXPECT_EQ(Refusal(h + "1,gpu,4,5\n"),
            "f.csv:2: column 'server': server 4 is not in the cluster (servers 0..3)");
  EXPECT_EQ(Refusal(h + "1,gpu,-1,5\n"),
            "f.csv:2: column 'server': server -1 is not in the cluster (servers 0..3)");
  EXPECT_EQ(Refusal(h + "1,gpu,1.5,5\n"), "f.csv:2: column 'server': not a whole number: '1.5'");
  EXPECT_EQ(Refusal(h + "1,gpu,0,5\n", 0),
            "f.csv:2: column 'server': server 0: the run has no GPU servers to fail");
  EXPECT_EQ(Refusal(h + "1,gpu,0,-5\n"),
            "f.csv:2: column 'repair_s': must be in [0, 1000000000], got -5");
  EXPECT_EQ(Refusal(h + "1,gpu,0,2e9\n"),
            "f.csv:2: column 'repair_s': must be in [0, 1000000000], got 2e9");
  EXPECT_EQ(Refusal(h + "1,gpu,0,\n"), "f.csv:2: column 'repair_s': not a number: ''");
}

TEST(FailureTrace, AMissingFileOrAFolderIsRefusedNamingIt) {
  test::ScopedTempDir dir("failure_trace");
  std::filesystem::create_directories(dir.path());
  std::vector<FaultEvent> events;
  Status missing = ReadFailureTrace(dir.path() + "/none.csv", Servers(4), &events);
  EXPECT_EQ(missing.message(), dir.path() + "/none.csv: cannot read: No such file or directory");
  Status folder = ReadFailureTrace(dir.path(), Servers(4), &events);
  EXPECT_EQ(folder.message(), dir.path() + ": cannot read: Is a directory");
  EXPECT_TRUE(events.empty());
}

config::Faults Block(const std::string& text) {
  config::Faults faults;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &faults)) << text;
  return faults;
}

TEST(FailureTrace, AFaultPlanHoldsTheTracesFailuresBesideAFailureModelsDraws) {
  test::ScopedTempDir dir("failure_trace_plan");
  std::filesystem::create_directories(dir.path());
  const std::string path = dir.path() + "/failures.csv";
  std::ofstream(path) << kHeader << "7200,gpu,1,600\n"
                      << "100,nic,0,60\n";
  const std::string model =
      "failure_model { component { component: \"host\" mtbf_h: 100 } end_s: 360000 } ";
  FaultPlan drawn, replayed, both;
  ASSERT_TRUE(BuildFaultPlan(Block(model), 5, Servers(4), &drawn).ok());
  ASSERT_TRUE(
      BuildFaultPlan(Block("failure_trace: \"" + path + "\""), 5, Servers(4), &replayed).ok());
  Status s = BuildFaultPlan(Block(model + "failure_trace: \"" + path + "\""), 5, Servers(4), &both);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_GT(drawn.events.size(), 2u);
  ASSERT_EQ(replayed.events.size(), 2u);
  EXPECT_EQ(both.events.size(), drawn.events.size() + 2);
  EXPECT_TRUE(
      std::is_sorted(both.events.begin(), both.events.end(),
                     [](const FaultEvent& a, const FaultEvent& b) { return a.at_s < b.at_s; }));
  int from_trace = 0;
  for (const FaultEvent& e : both.events) {
    from_trace += e.Describe() == "crash server:1 @7200s restart +600s (failure:gpu)" ||
                  e.Describe() == "crash server:0 @100s restart +60s (failure:nic)";
  }
  EXPECT_EQ(from_trace, 2);

  std::ofstream(path) << kHeader << "7200,gpu,9,600\n";
  FaultPlan refused;
  EXPECT_EQ(
      BuildFaultPlan(Block("failure_trace: \"" + path + "\""), 5, Servers(4), &refused).message(),
      "faults.failure_trace: " + path +
          ":2: column 'server': server 9 is not in the cluster (servers 0..3)");
}

}  // namespace
}  // namespace troupe
