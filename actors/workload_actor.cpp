#include "actors/workload_actor.hpp"

#include <caf/actor_cast.hpp>

#include "actors/job_actor.hpp"

namespace troupe {
namespace {

ArrivalBatch TakeArrivals(caf::stateful_actor<WorkloadState>* self, double until_s) {
  WorkloadState& st = self->state;
  auto scheduler = caf::actor_cast<caf::actor>(self->current_sender());
  ArrivalBatch batch;
  while (st.source->NextArrival() && *st.source->NextArrival() <= until_s) {
    JobSpec spec = st.source->Pop();
    const ModelProfile* profile = st.catalog->Find(spec.model);
    ArrivedJob arrived;
    arrived.iter_time_s = profile->iter_time_s;
    arrived.ideal_cpus_per_gpu = profile->ideal_cpus_per_gpu;
    arrived.ideal_memory_gb_per_gpu = profile->ideal_memory_gb_per_gpu;
    arrived.speedup_at_ideal = profile->speedup_at_ideal;
    arrived.sensitivity = profile->sensitivity;  // oracle profiling: the true matrix
    arrived.job = self->spawn(JobActor, spec, st.catalog, scheduler, st.clock, st.telemetry);
    arrived.spec = std::move(spec);
    batch.jobs.push_back(std::move(arrived));
  }
  batch.next_arrival_s = st.source->NextArrival().value_or(-1);
  return batch;
}

}  // namespace

caf::behavior WorkloadActor(caf::stateful_actor<WorkloadState>* self,
                            std::shared_ptr<JobSource> source,
                            std::shared_ptr<const ModelCatalog> catalog, RunClock clock,
                            Telemetry* telemetry) {
  self->state.source = std::move(source);
  self->state.catalog = std::move(catalog);
  self->state.clock = clock;
  self->state.telemetry = telemetry;
  return {
      [=](const ArrivalsRequest& request) {
        self->state.telemetry->messages.fetch_add(1, std::memory_order_relaxed);  // the reply
        return TakeArrivals(self, request.until_s);
      },
      [=](caf::get_atom) { return self->state.source->NextArrival().value_or(-1); },
  };
}

}  // namespace troupe
