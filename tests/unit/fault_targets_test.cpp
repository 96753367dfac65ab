// `job:N` names the job whose id is N, also in a trace whose ids do not run 0 .. count - 1: a
// declared target that names no job of the workload is refused, saying which ids there are, and
// random crashes pick jobs that exist.
#include <gtest/gtest.h>

#include <set>

#include "emulation/fault_plan.hpp"

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

}  // namespace
}  // namespace troupe
