// The job actor: one training job. It holds its model, the iterations it has left and its true
// throughput function of (GPUs, CPUs, memory): the model's sensitivity matrix.
//
// On a lease — all of its parts, for a gang job spread over servers; none if any part was refused
// — it advances as Synergy's round semantics say: floor(lease / (iteration time / speedup))
// iterations, speedup read from the matrix at its CPUs and memory per GPU (times the slowest
// server's speed, when a `slow` fault made one a straggler). The work is committed — checkpointed,
// to the checkpoint store when the run has faults — when the lease ends, on the run's clock; the
// job then reports to the scheduler that ordered the lease. If a server of the lease dies first
// (LeaseLost) the lease's work is lost and the job reports at once that it did not run. A lost
// report is re-sent when the scheduler asks (ProgressQuery). The job lives until the scheduler has
// recorded its end and stops it.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <memory>
#include <vector>

#include "emulation/model_catalog.hpp"
#include "emulation/runtime/run_clock.hpp"
#include "emulation/runtime/telemetry.hpp"
#include "messages/cluster_messages.hpp"

namespace troupe {

// Where a job starts from: a new job from nothing, a restarted one from its checkpoint.
struct JobStart {
  JobCheckpoint from;      // from.iterations_left < 0: all of spec.iterations
  caf::actor checkpoints;  // the checkpoint store; none when the run has no faults
};

// The lease being assembled from its parts, then run.
struct JobLease {
  int64_t round = -1;
  double start_s = -1;
  double end_s = 0;
  int32_t parts_expected = 1;
  std::vector<int32_t> servers_seen;  // a duplicated grant is ignored
  std::vector<LeasePart> parts;
  bool refused = false;
  bool ended = false;  // reported (ran, not ran or lost)
  double speed = 1;
  caf::actor scheduler;
};

struct JobActorState {
  JobSpec spec;
  std::shared_ptr<const ModelCatalog> catalog;  // keeps `profile` alive
  const ModelProfile* profile = nullptr;
  caf::actor scheduler;
  caf::actor checkpoints;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  JobCheckpoint account;  // the committed state: what a checkpoint holds
  JobLease lease;
  JobProgress last_report;  // re-sent on a ProgressQuery
  static inline const char* name = "troupe.job";
};

caf::behavior JobActor(caf::stateful_actor<JobActorState>* self, JobSpec spec,
                       std::shared_ptr<const ModelCatalog> catalog, caf::actor scheduler,
                       RunClock clock, Telemetry* telemetry, JobStart start);

}  // namespace troupe
