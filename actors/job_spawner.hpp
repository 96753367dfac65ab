// How a job's actor is made: from its spec, where it starts from (nothing, or its checkpoint) and
// what the run gives every job (the model catalogue, the clock, the checkpoint store, real
// compute). In a run with faults the workload spawns every job when it arrives, since it
// supervises the jobs from then on (workload_actor.hpp). Without faults nothing needs a job's
// actor before its first lease: the scheduler spawns it when it first places the job, so that a
// job waiting in a deep queue costs its scheduler entry and no actor. Either way the actor is the
// same, and it is spawned before any lease reaches it, so the run's records do not change.
#pragma once

#include <caf/actor.hpp>
#include <caf/local_actor.hpp>
#include <memory>

#include "actors/compute_worker_actor.hpp"
#include "faults/checkpoint_cadence.hpp"
#include "messages/cluster_messages.hpp"
#include "messages/job_spec.hpp"
#include "runtime/actor_context.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {

class JobSpawner {
 public:
  JobSpawner() = default;
  // `checkpoints`: the checkpoint store in runs with faults, else none. `compute`: real compute
  // for every job, none for the emulated throughput. `commit_at_grant`: the run is emulated and
  // has no faults (JobStart::commit_at_grant). `offers_standing`: it is emulated with faults that
  // standing leases survive (JobStart::offers_standing).
  JobSpawner(std::shared_ptr<const ModelCatalog> catalog, RunClock clock, Telemetry* telemetry,
             caf::actor checkpoints, std::shared_ptr<const JobCompute> compute,
             bool commit_at_grant, bool offers_standing = false);

  // Spawns the job's actor as `parent`'s child, reporting to `scheduler`; it starts from `from`
  // (a restart) or, when null, from nothing.
  job_actor Spawn(caf::local_actor* parent, JobSpec spec, scheduler_actor scheduler,
                  const JobCheckpoint* from = nullptr) const;

  bool valid() const { return catalog_ != nullptr; }
  // faults.recovery: every job spawned checkpoints and restarts at its costs (JobStart::recovery).
  void set_recovery(std::shared_ptr<const RecoveryPlan> recovery) {
    recovery_ = std::move(recovery);
  }

 private:
  std::shared_ptr<const ModelCatalog> catalog_;
  ActorContext ctx_;
  caf::actor checkpoints_;
  std::shared_ptr<const JobCompute> compute_;
  bool commit_at_grant_ = false;
  bool offers_standing_ = false;
  std::shared_ptr<const RecoveryPlan> recovery_;
};

}  // namespace troupe
