// A restarted scheduler's engine rebuilds its state (cluster_scheduler.hpp, docs/faults.md):
// every job the workload released, with the progress each checkpointed, then resumes at the next
// round.
#include <cmath>

#include "scheduling/cluster_scheduler_internal.hpp"

namespace troupe::scheduling {
namespace {

void ApplyCheckpoint(EngineState& st, const ResumePoint& c) {
  auto it = st.jobs.find(c.job_id);
  if (it == st.jobs.end()) return;
  TrackedJob& job = it->second;
  job.record.rounds_run = c.rounds_run;
  job.record.gpu_seconds = c.gpu_seconds;
  job.record.start_s = c.first_start_s;
  job.record.wasted_gpu_s = c.wasted_gpu_s;
  job.record.restarts = c.restarts;
  if (st.options.recovery) st.recovery[c.job_id] = c.recovery;
  job.view.attained_gpu_s = c.gpu_seconds;
  if (c.iterations_left >= 0) job.view.iterations_left = c.iterations_left;
  if (c.rounds_run > 0) job.view.last_served_s = c.at_s;
  // Finished before the crash: recorded again (the recorder keeps the first record of a job).
  if (c.finished) engine_detail::RecordFinished(st, job, c.at_s);
}

}  // namespace

std::vector<ProfileAsk> ClusterScheduler::Rebuild(std::vector<Arrival>& jobs, double next_arrival_s,
                                                  const std::vector<int64_t>& failed,
                                                  const std::vector<ResumePoint>& checkpoints,
                                                  const std::vector<int64_t>& dead_for_good) {
  EngineState& st = *st_;
  std::vector<ProfileAsk> asks = engine_detail::Admit(st, jobs);
  st.next_arrival_s = next_arrival_s;
  // Failed and recorded by an earlier scheduler: done, and not recorded (nor reported) again.
  for (int64_t id : failed) {
    auto it = st.jobs.find(id);
    if (it == st.jobs.end() || it->second.done) continue;
    it->second.done = true;
    engine_detail::NoteDone(st, id);
    if (it->second.record.measured) ++st.measured_ended;
  }
  for (const ResumePoint& c : checkpoints) ApplyCheckpoint(st, c);
  for (const Arrival& a : jobs) {
    TrackedJob& job = st.jobs[a.spec.job_id];
    if (job.has_actor || job.done) continue;
    // Down while the scheduler was: it failed for good, or its restart will say so.
    job.down = true;
    job.restart_at_s = 0;
    engine_detail::Touch(st, a.spec.job_id);
  }
  for (int64_t id : dead_for_good) {
    auto it = st.jobs.find(id);
    if (it != st.jobs.end() && !it->second.done) {
      engine_detail::RecordFailed(st, it->second,
                                  "crashed while the scheduler was down, without a restart");
    }
  }
  return asks;
}

double ClusterScheduler::Resume(double now_s) {
  EngineState& st = *st_;
  const double wake_s = std::ceil(now_s / st.options.round_s) * st.options.round_s;
  st.round = static_cast<int64_t>(std::llround(wake_s / st.options.round_s)) - 1;
  st.out->WakeAt(wake_s);
  return wake_s;
}

}  // namespace troupe::scheduling
