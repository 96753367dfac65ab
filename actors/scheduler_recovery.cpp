// A restarted scheduler (scheduler_actor.hpp, docs/faults.md): it asks the workload for every job
// it released and the checkpoint store for their progress, has the engine rebuild its state from
// them, and resumes at the next round.
#include <spdlog/spdlog.h>

#include <utility>
#include <vector>

#include "actors/scheduler_internal.hpp"
#include "messages/atoms.hpp"
#include "runtime/counted_send.hpp"

namespace troupe::scheduler_detail {
namespace {

void Resume(Self* self) {
  SchedulerState& st = self->state;
  const double now_s = st.clock.Now(self);
  const double wake_s = st.engine->Resume(now_s);
  spdlog::info("scheduler: restarted at {:.0f} s with {} jobs queued; resuming at {:.0f} s", now_s,
               st.engine->queued(), wake_s);
}

void Rebuild(Self* self, RecoveredJobs& recovered, const CheckpointList& list) {
  SchedulerState& st = self->state;
  std::vector<scheduling::Arrival> jobs = TakeArrivals(self, recovered.jobs);
  std::vector<scheduling::ResumePoint> checkpoints;
  checkpoints.reserve(list.checkpoints.size());
  for (const JobCheckpoint& c : list.checkpoints) checkpoints.push_back(ResumePointOf(c));
  std::vector<ProfileAsk> asks = st.engine->Rebuild(
      jobs, recovered.next_arrival_s, recovered.failed, checkpoints, recovered.dead_for_good);
  if (asks.empty()) return Resume(self);
  Ask(
      self, st.telemetry, st.cluster.profiler, ProfileRequest{std::move(asks)},
      [=](ProfileBatch& profiles) {
        self->state.engine->ApplyProfiles(profiles);
        Resume(self);
      },
      [=] { Unreachable(self, "the profiler"); }, RetryEveryRound(st));
}

}  // namespace

void Recover(Self* self) {
  SchedulerState& st = self->state;
  Ask(
      self, st.telemetry, st.cluster.workload, RecoverRequest{},
      [=](RecoveredJobs& recovered) {
        SchedulerState& st = self->state;
        Ask(
            self, st.telemetry, st.cluster.checkpoints, CheckpointQuery{-1},
            [=](CheckpointList& list) mutable { Rebuild(self, recovered, list); },
            [=] { Unreachable(self, "the checkpoint store"); }, RetryEveryRound(st));
      },
      [=] { Unreachable(self, "the workload"); }, RetryEveryRound(st));
}

}  // namespace troupe::scheduler_detail
