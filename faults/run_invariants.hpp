// Run invariants: what must hold after any run, faults or not (docs/faults.md). Checked by the
// fault tests and after every run of `troupe chaos`, from the run's records alone:
//   - every job is recorded once; when the run ended because all jobs finished, each of them
//     finished or failed with a reason (a job that did neither is "lost": must be 0);
//   - a job failed because it no longer fits (its failure holds kNoLongerFits) needs more GPUs
//     than the servers no crash kills for good have;
//   - no server is over capacity in any round, GPU indices exist and are leased once per round;
//   - a job never holds more GPUs than it asked for, nor the same server twice in a round;
//   - no lease is given on a server, or to a job, that is dead: after a crash at t and until
//     its restart, no round starting after t leases that server (or that job, if it failed).
// Pure: no actors, no clocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faults/fault_plan.hpp"
#include "messages/records.hpp"

namespace troupe {

// In the failure of a job the scheduler failed because the servers lost for good left too few
// GPUs for it ("needs 8 GPUs; 4 survive (5 of 6 servers lost for good)").
inline constexpr char kNoLongerFits[] = "servers lost for good)";

struct ServerCapacity {
  int32_t gpus = 0;
  double cpus = 0;
  double memory_gb = 0;
};

struct InvariantInput {
  const std::vector<JobRecord>* jobs = nullptr;
  const std::vector<RoundRecord>* rounds = nullptr;
  const std::vector<LeaseRecord>* leases = nullptr;  // empty without run.lease_log
  std::vector<ServerCapacity> servers;               // in cluster order
  const FaultPlan* faults = nullptr;                 // may be null
  int64_t jobs_expected = 0;                         // 0: unknown
  std::string end_reason;
};

struct InvariantReport {
  std::vector<std::string> violations;  // empty: every invariant holds
  int64_t jobs_finished = 0;
  int64_t jobs_failed = 0;
  int64_t jobs_lost = 0;
  double wasted_gpu_hours = 0;

  bool ok() const { return violations.empty(); }
};

InvariantReport CheckRunInvariants(const InvariantInput& input);

}  // namespace troupe
