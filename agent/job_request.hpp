// An agent's Register, checked and turned into the ArrivedJob the scheduler plans with.
//
// The job is described either by a model of the run's catalogue (iteration time, ideal demand and
// sensitivity come from there) or by what the agent measured (iter_time_s and a sensitivity
// matrix with its ideal CPUs and memory per GPU). Every rule failed is an InvalidInput naming the
// Register field ("job.sensitivity.values: 3 values for a 2 x 2 grid"). Pure code (no actors, no
// I/O): the gateway, the tests and the fuzzer call it.
#pragma once

#include <cstdint>

#include "base/status.hpp"
#include "messages/agent.pb.h"
#include "messages/cluster_messages.hpp"
#include "workload/model_catalog.hpp"

namespace troupe::agent_wire {

inline constexpr int64_t kMaxAgentIterations = int64_t{1} << 40;

struct JobRequestLimits {
  int32_t cluster_gpus = 0;  // a job may span servers (gang), not exceed the cluster
};

// Checks `request` and fills `arrived` (spec, iteration time, ideal demand, sensitivity; the
// actor handle is left empty for the caller).
Status MakeArrivedJob(const agent::JobRequest& request, const ModelCatalog& catalog,
                      const JobRequestLimits& limits, int64_t job_id, double arrival_s,
                      ArrivedJob* arrived);

}  // namespace troupe::agent_wire
