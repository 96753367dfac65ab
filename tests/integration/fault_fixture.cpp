#include "tests/integration/fault_fixture.hpp"

#include <gtest/gtest.h>

#include "faults/fault_plan.hpp"

namespace troupe::testing {

std::string FaultTestConfig(const std::string& run_extra) {
  return "cluster { servers { name: \"s\" count: 4 gpus: 4 cpus: 16 memory_gb: 200 } }\n"
         "workload { generator { jobs_per_hour: 6 num_jobs: 60 multi_gpu: true } }\n"
         "scheduler { mechanism: tune }\n"
         "run { seed: 3 lease_log: true " +
         run_extra + " }\n";
}

config::Faults FaultBlock(const std::vector<std::string>& faults) {
  config::Faults block;
  for (const std::string& f : faults) {
    Status s = ParseFaultFlag(f, block.add_fault());
    EXPECT_TRUE(s.ok()) << s.message();
  }
  return block;
}

RunResult RunWithFaults(const std::string& config, const std::vector<std::string>& faults) {
  return RunConfigText(config + "faults { " + FaultBlock(faults).ShortDebugString() + " }\n");
}

InvariantReport CheckFaultRun(const RunResult& r, const std::vector<std::string>& faults) {
  FaultPlan plan;
  EXPECT_TRUE(BuildFaultPlan(FaultBlock(faults), 3, FaultUniverse{4, 60, 0, {}}, &plan).ok());
  return CheckFaultRun(r, plan);
}

InvariantReport CheckFaultRun(const RunResult& r, const FaultPlan& plan) {
  InvariantInput in;
  in.jobs = &r.jobs;
  in.rounds = &r.rounds;
  in.leases = &r.leases;
  in.servers.assign(4, ServerCapacity{4, 16, 200});
  in.faults = &plan;
  in.jobs_expected = 60;
  in.end_reason = r.summary.end_reason();
  InvariantReport report = CheckRunInvariants(in);
  for (const std::string& v : report.violations) ADD_FAILURE() << v;
  EXPECT_EQ(report.jobs_lost, 0);
  return report;
}

}  // namespace troupe::testing
