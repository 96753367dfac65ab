// `job:N` names the job whose id is N, also in a trace whose ids do not run 0 .. count - 1: a
// declared target that names no job of the workload is refused, saying which ids there are, and
// random crashes pick jobs that exist.
#include <gtest/gtest.h>

#include <set>

#include "faults/fault_plan.hpp"

namespace troupe {
namespace {

config::Faults Declared(const std::string& flag) {
  config::Faults block;
  EXPECT_TRUE(ParseFaultFlag(flag, block.add_fault()).ok()) << flag;
  return block;
}

FaultUniverse TraceOf(std::vector<int64_t> ids) {
  FaultUniverse u;
  u.servers = 4;
  u.jobs = static_cast<int64_t>(ids.size());
  u.job_ids = std::move(ids);
  return u;
}

TEST(FaultTargets, AJobTargetNamesAJobIdOfTheTrace) {
  const FaultUniverse u = TraceOf({3, 7, 12});
  FaultPlan plan;
  EXPECT_TRUE(BuildFaultPlan(Declared("crash:job:12@100+10"), 1, u, &plan).ok());
  EXPECT_TRUE(BuildFaultPlan(Declared("crash:job:4-8@100+10"), 1, u, &plan).ok()) << "holds 7";

  Status none = BuildFaultPlan(Declared("crash:job:0@100+10"), 1, u, &plan);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("job:0 names no job of the workload (its job ids run 3..12)"),
            std::string::npos)
      << none.message();
  EXPECT_FALSE(BuildFaultPlan(Declared("crash:job:8-11@100+10"), 1, u, &plan).ok());
  EXPECT_FALSE(BuildFaultPlan(Declared("crash:job:13@100+10"), 1, u, &plan).ok());
}

TEST(FaultTargets, AGeneratorsJobsAreNumberedFromZero) {
  FaultUniverse u;
  u.servers = 4;
  u.jobs = 5;
  FaultPlan plan;
  EXPECT_TRUE(BuildFaultPlan(Declared("crash:job:4@100+10"), 1, u, &plan).ok());
  EXPECT_FALSE(BuildFaultPlan(Declared("crash:job:5@100+10"), 1, u, &plan).ok());
}

TEST(FaultTargets, RandomJobCrashesPickJobsOfTheTrace) {
  const FaultUniverse u = TraceOf({1000, 2000, 3000});
  config::Faults block;
  config::RandomFaults* r = block.mutable_random();
  r->set_count(200);
  r->add_kinds(config::crash);
  FaultPlan plan;
  ASSERT_TRUE(BuildFaultPlan(block, 9, u, &plan).ok());
  std::set<int64_t> hit;
  for (const FaultEvent& e : plan.events) {
    if (e.target.kind == EndpointKind::kJob) hit.insert(e.target.first);
  }
  EXPECT_EQ(hit, (std::set<int64_t>{1000, 2000, 3000}));
}

// A slow fault's factor is the speed it leaves (0.5: half speed): a factor that would make a time
// absurd (1e-300: 1e300 times as long) or speed things up is refused when the flag is parsed.
TEST(FaultTargets, SlowFactorIsASpeedBetweenAThousandthAndOne) {
  config::Fault fault;
  EXPECT_TRUE(ParseFaultFlag("slow:ps:0@0,x=0.001", &fault).ok());
  EXPECT_TRUE(ParseFaultFlag("slow:server:0-1@0,x=1", &fault).ok());
  for (const char* flag : {"slow:ps:0@0,x=1e-300", "slow:server:0-1@0,x=4.9e-324",
                           "slow:server:0@0,x=0.0009", "slow:server:0@0,x=2"}) {
    const Status s = ParseFaultFlag(flag, &fault);
    EXPECT_EQ(s.code(), Status::Code::kInvalidInput) << flag;
    EXPECT_NE(s.message().find("factor: must be in [0.001, 1]"), std::string::npos) << s.message();
  }
  config::Faults random;
  random.mutable_random()->set_count(1);
  random.mutable_random()->set_slow_factor(1e-300);
  FaultPlan plan;
  FaultUniverse u;
  u.servers = 2;
  const Status drawn = BuildFaultPlan(random, 1, u, &plan);
  EXPECT_EQ(drawn.code(), Status::Code::kInvalidInput);
  EXPECT_NE(drawn.message().find("slow_factor"), std::string::npos) << drawn.message();
}

}  // namespace
}  // namespace troupe
