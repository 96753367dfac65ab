// A restarted scheduler rebuilds its state (scheduler_actor.hpp, docs/faults.md): every job the
// workload released, with the progress each checkpointed, then resumes at the next round.
#include <spdlog/spdlog.h>

#include <cmath>

#include "actors/scheduler_internal.hpp"
#include "messages/atoms.hpp"
#include "runtime/counted_send.hpp"

namespace troupe::scheduler_detail {
namespace {

void ApplyCheckpoint(Self* self, const JobCheckpoint& c) {
  SchedulerState& st = self->state;
  auto it = st.jobs.find(c.job_id);
  if (it == st.jobs.end()) return;
  TrackedJob& job = it->second;
  job.record.rounds_run = c.rounds_run;
  job.record.gpu_seconds = c.gpu_seconds;
  job.record.start_s = c.first_start_s;
  job.record.wasted_gpu_s = c.wasted_gpu_s;
  job.record.restarts = c.restarts;
  job.view.attained_gpu_s = c.gpu_seconds;
  if (c.iterations_left >= 0) job.view.iterations_left = c.iterations_left;
  if (c.rounds_run > 0) job.view.last_served_s = c.at_s;
  // Finished before the crash: recorded again (the recorder keeps the first record of a job).
  if (c.finished) RecordFinished(self, job, c.at_s);
}

// Resumes at the first round boundary not before now: every lease the old scheduler gave has
// ended by then, so no job runs twice.
void Resume(Self* self) {
  SchedulerState& st = self->state;
  const double now_s = st.clock.Seconds(self->clock().now());
  const double wake_s = std::ceil(now_s / st.options.round_s) * st.options.round_s;
  st.round = static_cast<int64_t>(std::llround(wake_s / st.options.round_s)) - 1;
  spdlog::info("scheduler: restarted at {:.0f} s with {} jobs queued; resuming at {:.0f} s", now_s,
               st.queued, wake_s);
  TellAt(self, st.telemetry, st.clock, self, wake_s, round_end_atom::value, kWakeUp, wake_s);
}

void Rebuild(Self* self, RecoveredJobs& recovered, const CheckpointList& list) {
  SchedulerState& st = self->state;
  std::vector<ProfileAsk> asks = Admit(self, recovered.jobs);
  st.next_arrival_s = recovered.next_arrival_s;
  // Failed and recorded by an earlier scheduler: done, and not recorded (nor reported) again.
  for (int64_t id : recovered.failed) {
    auto it = st.jobs.find(id);
    if (it == st.jobs.end() || it->second.done) continue;
    it->second.done = true;
    NoteDone(st, id);
    if (it->second.record.measured) ++st.measured_ended;
  }
  for (const JobCheckpoint& c : list.checkpoints) ApplyCheckpoint(self, c);
  for (const ArrivedJob& a : recovered.jobs) {
    TrackedJob& job = st.jobs[a.spec.job_id];
    if (job.handle || job.done) continue;
    // Down while the scheduler was: it failed for good, or its restart will say so.
    job.down = true;
    job.restart_at_s = 0;
    Touch(st, a.spec.job_id);
  }
  for (int64_t id : recovered.dead_for_good) {
    auto it = st.jobs.find(id);
    if (it != st.jobs.end() && !it->second.done) {
      RecordFailed(self, it->second, "crashed while the scheduler was down, without a restart");
    }
  }
  if (asks.empty() || !st.cluster.profiler) return Resume(self);
  Ask(
      self, st.telemetry, st.cluster.profiler, ProfileRequest{std::move(asks)},
      [=](ProfileBatch& profiles) {
        ApplyProfiles(self, profiles);
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
