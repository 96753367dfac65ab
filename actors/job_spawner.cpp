#include "actors/job_spawner.hpp"

#include <caf/actor_cast.hpp>
#include <utility>

#include "actors/job_actor.hpp"

namespace troupe {

JobSpawner::JobSpawner(std::shared_ptr<const ModelCatalog> catalog, RunClock clock,
                       Telemetry* telemetry, caf::actor checkpoints,
                       std::shared_ptr<const JobCompute> compute, bool commit_at_grant,
                       bool offers_standing)
    : catalog_(std::move(catalog)),
      ctx_{clock, telemetry},
      checkpoints_(std::move(checkpoints)),
      compute_(std::move(compute)),
      commit_at_grant_(commit_at_grant),
      offers_standing_(offers_standing) {}

job_actor JobSpawner::Spawn(caf::local_actor* parent, JobSpec spec, scheduler_actor scheduler,
                            const JobCheckpoint* from) const {
  JobStart start;
  start.from.iterations_left = -1;
  if (from) start.from = *from;
  start.respawned = from != nullptr;
  start.checkpoints = checkpoints_;
  start.compute = compute_;
  start.commit_at_grant = commit_at_grant_;
  start.offers_standing = offers_standing_;
  start.recovery = recovery_;
  return parent->spawn(JobActor, std::move(spec), catalog_, std::move(scheduler), ctx_,
                       std::move(start));
}

}  // namespace troupe
