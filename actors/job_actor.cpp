#include "actors/job_actor.hpp"

#include <algorithm>
#include <cmath>

#include "emulation/runtime/counted_send.hpp"

namespace troupe {
namespace {

// Iterations done in a lease of `seconds` at `speedup`, as Synergy's simulator counts them
// (same operation order, so the same floating-point result).
int64_t IterationsIn(double seconds, double iter_time_s, double speedup) {
  const double per_iteration = iter_time_s / speedup;
  return static_cast<int64_t>(std::floor(seconds / per_iteration));
}

void StartLeasePart(JobActorState& st, const LeaseGrant& grant) {
  if (grant.round != st.lease_round) {
    st.lease_round = grant.round;
    st.parts_seen = 0;
    st.refused = false;
    st.gpus = 0;
    st.cpus = st.memory_gb = 0;
  }
  ++st.parts_seen;
  st.refused = st.refused || !grant.granted;
  st.gpus += static_cast<int32_t>(grant.gpu_ids.size());
  st.cpus += grant.cpus;
  st.memory_gb += grant.memory_gb;
}

JobProgress RunLease(JobActorState& st, const LeaseGrant& grant) {
  JobProgress p;
  p.job_id = st.spec.job_id;
  p.round = grant.round;
  p.iterations_left = st.iterations_left;
  // A gang job runs on all of its GPUs or not at all.
  if (st.refused || st.gpus != st.spec.gpus) return p;
  p.ran = true;
  p.gpus = st.gpus;
  p.cpus = st.cpus;
  p.memory_gb = st.memory_gb;
  p.speedup = st.profile->Speedup(st.cpus / st.gpus, st.memory_gb / st.gpus);
  const int64_t possible =
      IterationsIn(grant.end_s - grant.start_s, st.profile->iter_time_s, p.speedup);
  p.iterations_done = std::min(possible, st.iterations_left);
  st.iterations_left -= p.iterations_done;
  p.iterations_left = st.iterations_left;
  p.finished = st.iterations_left == 0;
  return p;
}

}  // namespace

caf::behavior JobActor(caf::stateful_actor<JobActorState>* self, JobSpec spec,
                       std::shared_ptr<const ModelCatalog> catalog, caf::actor scheduler,
                       RunClock clock, Telemetry* telemetry) {
  JobActorState& st = self->state;
  st.profile = catalog->Find(spec.model);
  st.catalog = std::move(catalog);
  st.iterations_left = spec.iterations;
  st.spec = std::move(spec);
  st.scheduler = std::move(scheduler);
  st.clock = clock;
  st.telemetry = telemetry;
  return {
      [=](const LeaseGrant& grant) {
        JobActorState& st = self->state;
        StartLeasePart(st, grant);
        if (st.parts_seen < grant.parts) return;
        JobProgress progress = RunLease(st, grant);
        const bool finished = progress.finished;
        TellAt(self, st.telemetry, st.clock, st.scheduler, grant.end_s, std::move(progress));
        if (finished) self->quit();
      },
  };
}

}  // namespace troupe
