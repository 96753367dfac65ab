// What the cluster fault tests share (fault_test, permanent_loss_test): their small cluster and
// workload, a run of it under --fault flags, and the run invariants checked on the result.
#pragma once

#include <string>
#include <vector>

#include "config/config.pb.h"
#include "faults/run_invariants.hpp"
#include "tests/integration/run_fixture.hpp"

namespace troupe::testing {

// 4 servers x 4 GPUs; 60 jobs of 1-8 GPUs arriving over ~10 hours: gang jobs span servers.
// `run_extra` goes inside the run block (e.g. "deadline_s: 3000000").
std::string FaultTestConfig(const std::string& run_extra = "");

// The --fault flags as a faults block (each must parse: a test failure otherwise).
config::Faults FaultBlock(const std::vector<std::string>& faults);

// `config` (a FaultTestConfig) run under `faults`.
RunResult RunWithFaults(const std::string& config, const std::vector<std::string>& faults);

// The run invariants (faults/run_invariants.hpp) of a FaultTestConfig run under `faults`, each
// violation a test failure, and no job lost.
InvariantReport CheckFaultRun(const RunResult& r, const std::vector<std::string>& faults);
// The same against a fault plan built already (a drawn failure model's, say).
InvariantReport CheckFaultRun(const RunResult& r, const FaultPlan& plan);

}  // namespace troupe::testing
