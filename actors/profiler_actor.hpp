// The profiler actor: Synergy's optimistic profiling as a service of the cluster.
//
// For each job that arrives it measures the job's true sensitivity (its model's matrix, read
// with optional seeded noise) the way the configured mode says — optimistic (binary search on the
// CPU axis at full memory, memory axis modelled), naive (the whole grid) or oracle (the truth, at
// no cost) — on one of the profiling servers, each point costing seconds_per_point of virtual
// time. It answers with the estimated matrix, the ideal demand, the cost, and when the profile is
// ready: a job waits for a free profiling server (servers = 0: as many as needed).
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <memory>
#include <vector>

#include "base/rng.hpp"
#include "messages/profiling_messages.hpp"
#include "runtime/telemetry.hpp"
#include "scheduling/profiling.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {

struct ProfilerConfig {
  scheduling::ProfilingOptions options;
  int32_t servers = 0;  // profiling servers; 0: one per job, no waiting
  uint64_t seed = 1;    // measurement noise
};

struct ProfilerState {
  ProfilerConfig config;
  std::shared_ptr<const ModelCatalog> catalog;
  std::unique_ptr<Rng> rng;
  std::vector<double> server_free_at_s;  // per profiling server
  Telemetry* telemetry = nullptr;
  static inline const char* name = "troupe.profiler";
};

caf::behavior ProfilerActor(caf::stateful_actor<ProfilerState>* self, ProfilerConfig config,
                            std::shared_ptr<const ModelCatalog> catalog, Telemetry* telemetry);

}  // namespace troupe
