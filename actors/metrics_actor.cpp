#include "actors/metrics_actor.hpp"

#include <algorithm>

#include "runtime/live_feed.hpp"

namespace troupe {

caf::behavior MetricsActor(caf::stateful_actor<MetricsState>* self,
                           std::shared_ptr<std::promise<RunRecords>> handover, Telemetry* telemetry,
                           int64_t expected_jobs) {
  self->state.handover = std::move(handover);
  self->state.telemetry = telemetry;
  // The records are filled in order, so the pages of a reservation become resident only as
  // records arrive: reserving more than a small run needs costs it address space, not memory,
  // and saves it doubling's copies and the freed buffers the allocator keeps for a while (about a
  // tenth of the default run's memory). A hash set reserved this way would touch all of its table
  // at once: it is left to grow. Beyond a few million jobs the address space reserved up front
  // would be larger than the doubling it saves.
  constexpr int64_t kMostReserved = int64_t{1} << 22;
  constexpr int64_t kFirstReserved = int64_t{1} << 16;  // for a run of unknown length
  const int64_t jobs = expected_jobs > 0 ? std::min(expected_jobs, kMostReserved) : kFirstReserved;
  self->state.records.jobs.reserve(static_cast<size_t>(jobs));
  self->state.records.rounds.reserve(static_cast<size_t>(kFirstReserved));
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
      [=](LinkBatch& batch) {
        if (LiveFeed* live = self->state.telemetry->live) live->OnLinks(batch.links);
        auto& links = self->state.records.links;
        links.insert(links.end(), std::make_move_iterator(batch.links.begin()),
                     std::make_move_iterator(batch.links.end()));
      },
      [=](JobNetworkBatch& batch) { self->state.records.job_network = std::move(batch.jobs); },
      [=](JobRecoveryBatch& batch) { self->state.records.job_recovery = std::move(batch.jobs); },
      [=](ServerDownRecord& down) { self->state.records.servers_down.push_back(std::move(down)); },
      [=](const ServerBackRecord& back) {
        auto& downs = self->state.records.servers_down;
        auto it = std::find_if(downs.rbegin(), downs.rend(), [&back](const ServerDownRecord& d) {
          return d.server == back.server && d.at_s <= back.at_s;
        });
        if (it != downs.rend()) it->restart_at_s = back.at_s;
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
