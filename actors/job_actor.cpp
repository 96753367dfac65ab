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
    st.parts.clear();
  }
  ++st.parts_seen;
  st.refused = st.refused || !grant.granted;
  if (grant.granted) {
    st.parts.push_back(LeasePart{grant.server, grant.gpu_ids, grant.cpus, grant.memory_gb});
  }
}

JobProgress RunLease(JobActorState& st, const LeaseGrant& grant) {
  JobProgress p;
  p.job_id = st.spec.job_id;
  p.round = grant.round;
  p.iterations_left = st.iterations_left;
  for (const LeasePart& part : st.parts) {
    p.gpus += static_cast<int32_t>(part.gpu_ids.size());
    p.cpus += part.cpus;
    p.memory_gb += part.memory_gb;
  }
  p.parts = std::move(st.parts);
  // A gang job runs on all of its GPUs or not at all.
  if (st.refused || p.gpus != st.spec.gpus) return p;
  p.ran = true;
  p.speedup = st.profile->Speedup(p.cpus / p.gpus, p.memory_gb / p.gpus);
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
