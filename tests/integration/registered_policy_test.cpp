// Policies selected by registered name (scheduler.policy_name; docs/extending.md), through the
// troupe binary: the example policy "sjf" (scheduling/examples/shortest_job_first.cpp) runs a
// small trace and its jobs start shortest first; a built-in selected by name gives exactly what
// its enum identifier gives; an unknown name is refused with the known ones; `troupe list` shows
// the example.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {
namespace {

// One 4-GPU server. Eight single-GPU jobs arrive at 0, longer ones with smaller ids (so that
// arrival order and shortest-first differ); four short ones arrive at 4000 s, while all GPUs are
// busy. The starvation guard is off: the policy alone decides.
constexpr int kRoundS = 300;

std::string Trace() {
  std::string csv = "job_id,model,arrival_s,duration_s,gpus\n";
  for (int id = 0; id < 8; ++id) {
    csv += std::to_string(id) + ",res18,0," + std::to_string(3000 * (8 - id)) + ",1\n";
  }
  for (int id = 8; id < 12; ++id) {
    csv += std::to_string(id) + ",res18,4000," + std::to_string(600 * (id - 7)) + ",1\n";
  }
  return csv;
}

std::string Config(const std::string& trace) {
  return "cluster { servers { count: 1 gpus: 4 cpus: 24 memory_gb: 250 } }\n"
         "workload { trace_file: \"" +
         trace +
         "\" }\n"
         "scheduler { round_s: " +
         std::to_string(kRoundS) + " starvation_s: 0 }\n";
}

struct Job {
  double arrival_s, start_s, ideal_s;
  int64_t id;
};

// Runs `config` with `sets` into dir/name and reads its jobs.csv.
std::vector<Job> RunJobs(const std::string& dir, const std::string& name,
                         const std::vector<std::string>& sets) {
  std::vector<std::string> args = {"run", dir + "/config.textproto", "--out", dir + "/" + name,
                                   "--quiet"};
  for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
  const ProcessResult r = RunTroupe(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<Job> jobs;
  for (const auto& row : ReadCsv(dir + "/" + name + "/jobs.csv")) {
    jobs.push_back({std::stod(row.at("arrival_s")), std::stod(row.at("start_s")),
                    std::stod(row.at("ideal_duration_s")), std::stoll(row.at("job_id"))});
  }
  return jobs;
}

// Job ids by first start, ties by id.
std::vector<int64_t> StartOrder(std::vector<Job> jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    return std::tie(a.start_s, a.id) < std::tie(b.start_s, b.id);
  });
  std::vector<int64_t> ids;
  for (const Job& j : jobs) ids.push_back(j.id);
  return ids;
}

class RegisteredPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir("registered-policy");
    WriteFile(dir_ + "/trace.csv", Trace());
    WriteFile(dir_ + "/config.textproto", Config(dir_ + "/trace.csv"));
  }
  std::string dir_;
};

TEST_F(RegisteredPolicyTest, TheExamplePolicyStartsShorterJobsFirst) {
  const std::vector<Job> jobs = RunJobs(dir_, "sjf", {"scheduler.policy_name=sjf"});
  ASSERT_EQ(jobs.size(), 12u);
  // Invariant: a job never starts while a shorter one that had waited a whole round has not.
  for (const Job& a : jobs) {
    for (const Job& b : jobs) {
      if (a.ideal_s < b.ideal_s && a.arrival_s <= b.start_s - kRoundS) {
        EXPECT_LE(a.start_s, b.start_s) << "job " << b.id << " started before shorter job " << a.id;
      }
    }
  }
  // Expected order: of the first eight, the four shortest (4-7) at 0, and the next shortest (3,
  // then 2) on the GPUs that 7 and 6 free; the short late arrivals (8-11) all start in the round
  // after they arrive, preempting longer jobs, and ahead of the longest two (1, then 0).
  EXPECT_EQ(StartOrder(jobs), (std::vector<int64_t>{4, 5, 6, 7, 3, 2, 8, 9, 10, 11, 1, 0}));
  // Arrival order (FIFO, the default) runs the long early jobs first: the name took effect.
  EXPECT_EQ(StartOrder(RunJobs(dir_, "fifo", {})),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST_F(RegisteredPolicyTest, ABuiltInByNameIsTheSameRunAsByItsEnumIdentifier) {
  RunJobs(dir_, "enum", {"scheduler.policy=las", "scheduler.mechanism=tune"});
  RunJobs(dir_, "name", {"scheduler.policy_name=las", "scheduler.mechanism_name=tune"});
  for (const char* file : {"jobs.csv", "rounds.csv"}) {
    const std::string by_enum = ReadFile(dir_ + "/enum/" + file);
    EXPECT_FALSE(by_enum.empty()) << file;
    EXPECT_EQ(by_enum, ReadFile(dir_ + "/name/" + file)) << file;
  }
}

TEST_F(RegisteredPolicyTest, AnUnknownNameIsOneLineListingTheKnownOnes) {
  ProcessResult r = RunTroupe({"run", dir_ + "/config.textproto", "--out", dir_ + "/bad", "--set",
                               "scheduler.policy_name=shortest"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("scheduler.policy_name: 'shortest' is not a registered policy"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("fifo, ftf, las, sjf, srtf"), std::string::npos) << r.err;
  r = RunTroupe({"validate", dir_ + "/config.textproto", "--set", "scheduler.mechanism_name=x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("scheduler.mechanism_name: 'x' is not a registered mechanism"),
            std::string::npos)
      << r.err;
}

TEST(RegisteredPolicyList, ListsTheExampleWithTheBuiltIns) {
  const ProcessResult r = RunTroupe({"list", "policies"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"fifo", "srtf", "las", "ftf", "sjf"}) {
    EXPECT_NE(r.out.find(std::string("  ") + name + " "), std::string::npos) << name << r.out;
  }
  EXPECT_EQ(RunTroupe({"list", "everything"}).exit_code, 2);
}

}  // namespace
}  // namespace troupe::testing
