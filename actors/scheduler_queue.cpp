// The scheduler's queue between rounds (scheduler_actor.hpp): the runnable jobs kept in the
// policy's order and the starvation guard's watch, both updated from the jobs touched since the
// last round, so that planning a round costs what changed and the head it reads, not the queue.
#include <algorithm>
#include <cassert>

#include "actors/scheduler_internal.hpp"

namespace troupe::scheduler_detail {
namespace {

// Files, moves or removes one job as its state now says.
void Refile(SchedulerState& st, int64_t id, double start_s) {
  auto it = st.jobs.find(id);
  if (it == st.jobs.end() || it->second.done) {
    st.order.Remove(id);
    st.starvation.Forget(id);
    st.not_ready.erase(id);
    return;
  }
  const TrackedJob& job = it->second;
  if (job.view.starving) {
    st.starvation.Forget(id);
  } else {
    st.starvation.Track(job.view);
  }
  if (job.down || job.ready_at_s > start_s) {
    st.order.Remove(id);
    if (job.down) {
      st.not_ready.erase(id);  // touched again when it is respawned
    } else {
      st.not_ready.insert(id);
    }
    return;
  }
  st.not_ready.erase(id);
  st.order.File(job.view);
}

}  // namespace

void EraseDoneJobs(SchedulerState& st) {
  for (int64_t id : st.done_in_queue) {
    if (st.jobs.erase(id) > 0) --st.queued;
  }
  st.done_in_queue.clear();
  if (st.queue.size() > 2 * static_cast<size_t>(st.queued) + 1024) {
    std::erase_if(st.queue, [&st](int64_t id) { return !st.jobs.contains(id); });
  }
}

void RefileTouched(SchedulerState& st, double start_s) {
  std::vector<int64_t> ids(st.not_ready.begin(), st.not_ready.end());
  ids.insert(ids.end(), st.touched.begin(), st.touched.end());
  st.touched.clear();
  for (int64_t id : ids) Refile(st, id, start_s);
}

std::vector<const scheduling::SchedJob*> OrderedHead(SchedulerState& st, double start_s,
                                                     size_t count) {
  std::vector<int64_t> ids;
  st.order.Head(start_s, count, ids);
  std::vector<const scheduling::SchedJob*> head;
  head.reserve(ids.size());
  for (int64_t id : ids) head.push_back(&st.jobs.find(id)->second.view);
  return head;
}

std::vector<const scheduling::SchedJob*> RunnableInArrivalOrder(SchedulerState& st,
                                                                double start_s) {
  std::vector<const scheduling::SchedJob*> runnable;
  runnable.reserve(st.order.size());
  for (int64_t id : st.queue) {
    auto it = st.jobs.find(id);
    if (it == st.jobs.end()) continue;  // erased; its id awaits compaction
    const TrackedJob& job = it->second;
    if (job.ready_at_s <= start_s && !job.down && !job.done) runnable.push_back(&job.view);
  }
  return runnable;
}

bool HeadIsWholeOrder(SchedulerState& st, double start_s,
                      const std::vector<const scheduling::SchedJob*>& head) {
  std::vector<const scheduling::SchedJob*> all = RunnableInArrivalOrder(st, start_s);
  if (all.size() != st.order.size()) return false;
  scheduling::OrderJobs(st.options.policy, start_s, all, st.options.order, head.size());
  return std::equal(head.begin(), head.end(), all.begin());
}

void MarkStarvingJobs(SchedulerState& st, double start_s) {
  if (!st.starvation.enabled()) return;
  std::vector<int64_t> due;
  st.starvation.Due(start_s, due);
  for (int64_t id : due) {
    if (!st.order.Contains(id)) continue;  // not runnable this round: marked once it is
    st.jobs.find(id)->second.view.starving = true;
    st.starvation.Forget(id);
    Touch(st, id);
  }
#ifndef NDEBUG
  for (const scheduling::SchedJob* job : RunnableInArrivalOrder(st, start_s)) {
    assert(job->starving || !scheduling::WaitedTooLong(start_s, st.options.order.starvation_s,
                                                       scheduling::WaitingSince(*job)));
  }
#endif
}

void NoteExpectedSpeedups(SchedulerState& st, const std::vector<scheduling::JobPlacement>& placed) {
  if (st.options.policy != scheduling::Policy::kSrtf &&
      st.options.policy != scheduling::Policy::kFtf) {
    return;  // no other policy reads it
  }
  // A job not placed in the round before expects its speed-up without a placement (Admit and
  // ApplyProfiles set it so): only last round's and this round's placed jobs change.
  const scheduling::MechanismKind kind = st.mechanism->kind();
  for (int64_t id : st.placed_last_round) {
    auto it = st.jobs.find(id);
    if (it == st.jobs.end()) continue;
    scheduling::SchedJob& view = it->second.view;
    view.expected_speedup = scheduling::ExpectedSpeedup(kind, view, nullptr);
    Touch(st, id);
  }
  st.placed_last_round.clear();
  for (const scheduling::JobPlacement& p : placed) {
    scheduling::SchedJob& view = st.jobs.find(p.job_id)->second.view;
    view.expected_speedup = scheduling::ExpectedSpeedup(kind, view, &p);
    Touch(st, p.job_id);
    st.placed_last_round.push_back(p.job_id);
  }
}

}  // namespace troupe::scheduler_detail
