// The job actor: one training job. It holds its model, the iterations it has left and its true
// throughput function of (GPUs, CPUs, memory): the model's sensitivity matrix.
//
// On a lease — all of its parts, for a gang job spread over servers; none if any part was refused
// — it advances as Synergy's round semantics say: floor(lease / (iteration time / speedup))
// iterations, speedup read from the matrix at its CPUs and memory per GPU. It reports progress to
// the scheduler at the end of the lease, on the run's clock, and quits once it has reported that
// it finished.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <memory>

#include "emulation/model_catalog.hpp"
#include "emulation/runtime/run_clock.hpp"
#include "emulation/runtime/telemetry.hpp"
#include "messages/cluster_messages.hpp"

namespace troupe {

struct JobActorState {
  JobSpec spec;
  std::shared_ptr<const ModelCatalog> catalog;  // keeps `profile` alive
  const ModelProfile* profile = nullptr;
  caf::actor scheduler;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  int64_t iterations_left = 0;
  // The lease being assembled from its parts.
  int64_t lease_round = -1;
  int32_t parts_seen = 0;
  bool refused = false;
  std::vector<LeasePart> parts;
  static inline const char* name = "troupe.job";
};

caf::behavior JobActor(caf::stateful_actor<JobActorState>* self, JobSpec spec,
                       std::shared_ptr<const ModelCatalog> catalog, caf::actor scheduler,
                       RunClock clock, Telemetry* telemetry);

}  // namespace troupe
