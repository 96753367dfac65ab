#include "actors/metrics_actor.hpp"

#include <algorithm>

#include "runtime/live_feed.hpp"

namespace troupe {

caf::behavior MetricsActor(caf::stateful_actor<MetricsState>* self,
                           std::shared_ptr<std::promise<RunRecords>> handover, Telemetry* telemetry,
                           int64_t expected_jobs) {
  self->state.handover = std::move(handover);
  self->state.telemetry = telemetry;
  // Filled in order, so its pages become resident only as records arrive (a hash set reserved
  // this way would touch all of its table at once: it is left to grow). Beyond a few million
  // jobs the address space reserved up front would be larger than the doubling it saves.
  constexpr int64_t kMostReserved = int64_t{1} << 22;
  if (expected_jobs > 0) {
    self->state.records.jobs.reserve(static_cast<size_t>(std::min(expected_jobs, kMostReserved)));
  }
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
