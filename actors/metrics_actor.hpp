// The metrics recorder: receives the run's records — one per job, one per round — and, when the
// scheduler says the run has ended, hands them over to the driver, which writes the run
// directory. It never blocks and never reads the wall clock.
#pragma once

#include <absl/container/flat_hash_set.h>

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "messages/records.hpp"
#include "messages/run_messages.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

struct RunRecords {
  std::vector<JobRecord> jobs;
  std::vector<RoundRecord> rounds;
  std::vector<LeaseRecord> leases;
  std::vector<LinkRecord> links;  // with a fabric
  std::vector<JobNetworkRecord> job_network;
  std::vector<JobRecoveryRecord> job_recovery;  // with faults.recovery
  std::vector<FaultRecord> faults;
  std::vector<ServerDownRecord> servers_down;
  RunEnd end;
};

struct MetricsState {
  RunRecords records;
  absl::flat_hash_set<int64_t> recorded_jobs;  // a restarted scheduler may record a job again
  std::shared_ptr<std::promise<RunRecords>> handover;
  Telemetry* telemetry = nullptr;
  static inline const char* name = "troupe.metrics";
};

// `expected_jobs`: the jobs the run will release when known (0: not known). Room for their records
// is reserved at once (memory the system hands out only as records fill it), so that a run of a
// million jobs never holds its records twice while the vector grows.
caf::behavior MetricsActor(caf::stateful_actor<MetricsState>* self,
                           std::shared_ptr<std::promise<RunRecords>> handover, Telemetry* telemetry,
                           int64_t expected_jobs);

}  // namespace troupe
