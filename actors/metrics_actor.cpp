#include "actors/metrics_actor.hpp"

#include "runtime/live_feed.hpp"

namespace troupe {

caf::behavior MetricsActor(caf::stateful_actor<MetricsState>* self,
                           std::shared_ptr<std::promise<RunRecords>> handover,
                           Telemetry* telemetry) {
  self->state.handover = std::move(handover);
  self->state.telemetry = telemetry;
  return {
      [=](JobRecord& job) {
        if (!self->state.recorded_jobs.insert(job.job_id).second) return;
        if (LiveFeed* live = self->state.telemetry->live) live->OnJob(job);
        self->state.records.jobs.push_back(std::move(job));
      },
      [=](FaultRecord& fault) {
        if (LiveFeed* live = self->state.telemetry->live) live->OnFault(fault);
        self->state.records.faults.push_back(std::move(fault));
      },
      [=](RoundRecord& round) {
        self->state.telemetry->rounds.store(round.round + 1, std::memory_order_relaxed);
        if (LiveFeed* live = self->state.telemetry->live) live->OnRound(round);
        self->state.records.rounds.push_back(std::move(round));
      },
      [=](LeaseBatch& batch) {
        auto& leases = self->state.records.leases;
        leases.insert(leases.end(), std::make_move_iterator(batch.leases.begin()),
                      std::make_move_iterator(batch.leases.end()));
      },
      [=](RunEnd& end) {
        MetricsState& st = self->state;
        st.records.end = std::move(end);
        st.handover->set_value(std::move(st.records));
        st.telemetry->done.store(true);
        self->quit();
      },
  };
}

}  // namespace troupe
