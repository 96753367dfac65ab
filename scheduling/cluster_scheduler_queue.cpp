// The round engine's queue between rounds (cluster_scheduler.hpp). A short queue is walked and
// sorted every round. A long one (above kIndexAbove heads; FIFO's above the GPUs) keeps its
// runnable jobs in the policy's order and the starvation guard's watch from round to round,
// refiling only the jobs touched since, so that planning a round costs what changed and the head
// it reads, not the queue. Both ways give the same rounds: a head that does not fill the GPUs
// falls back to the whole queue.
#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <limits>

#include "scheduling/cluster_scheduler_internal.hpp"

namespace troupe::scheduling::engine_detail {
namespace {

// Files, moves or removes one job as its state now says.
void Refile(EngineState& st, int64_t id, double start_s) {
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

void RefileTouched(EngineState& st, double start_s) {
  std::vector<int64_t> ids(st.not_ready.begin(), st.not_ready.end());
  ids.insert(ids.end(), st.touched.begin(), st.touched.end());
  st.touched.clear();
  for (int64_t id : ids) Refile(st, id, start_s);
}

const std::vector<scheduling::QueuedJob>& OrderedHead(EngineState& st, double start_s,
                                                      size_t count) {
  // Filed views are jobs' entries in st.jobs, refiled (RefileTouched) before they go, and again
  // whenever what a placement reads of them changes (ApplyProfiles touches the job).
  st.order.Head(start_s, count, st.head_jobs);
  return st.head_jobs;
}

std::vector<const scheduling::SchedJob*> RunnableInArrivalOrder(EngineState& st, double start_s) {
  std::vector<const scheduling::SchedJob*> runnable;
  runnable.reserve(static_cast<size_t>(st.queued));
  for (int64_t id : st.queue) {
    auto it = st.jobs.find(id);
    if (it == st.jobs.end()) continue;  // erased; its id awaits compaction
    const TrackedJob& job = it->second;
    if (job.ready_at_s <= start_s && !job.down && !job.done) runnable.push_back(&job.view);
  }
  return runnable;
}

// Takes the capacity of dead servers and spares out of the round's plan, which starts at start_s.
void ResetLedger(EngineState& st, double start_s) {
  st.ledger->Reset();
  st.ledger->set_round_start_s(start_s);
  for (int32_t s = 0; s < st.ledger->server_count(); ++s) {
    if (!HeldOut(st, s)) continue;
    const scheduling::ServerShape free = st.ledger->free(s);
    st.ledger->Take(s, free.gpus, free.cpus, free.memory_gb);
  }
}

// Queues this long (in heads) are kept ordered between rounds; below kIndexBelow they are sorted
// each round again. Below a few heads, refiling the ~one job per GPU that ran costs more than
// sorting; the gap keeps a queue near the bound from switching every round.
constexpr size_t kIndexAbove = 4;
constexpr size_t kIndexBelow = 2;

// A constant key (FIFO) never moves a job in the order, so refiling one is a hash probe and a
// B-tree lookup (to compare what a placement reads of it), while the whole-queue walk looks every
// queued job up: its queue is kept ordered as soon as it is longer
// than the cluster has GPUs (default experiment: a tenth fewer instructions planning its rounds
// than from 4 heads on), and sorted again below half of that.
size_t IndexAbove(const EngineState& st, size_t head) {
  return st.policy->constant_key ? static_cast<size_t>(st.ledger->total_gpus())
                                 : kIndexAbove * head;
}
size_t IndexBelow(const EngineState& st, size_t head) {
  return st.policy->constant_key ? static_cast<size_t>(st.ledger->total_gpus()) / 2
                                 : kIndexBelow * head;
}

void SetIndexed(EngineState& st, bool indexed, double start_s) {
  st.indexed = indexed;
  st.head_fell_short = false;
  st.touched.clear();
  st.not_ready.clear();
  st.order = scheduling::QueueOrder(*st.policy, st.options.order);
  st.starvation = scheduling::StarvationGuard(indexed ? st.options.order.starvation_s : 0);
  if (!indexed) return;
  for (int64_t id : st.queue) Refile(st, id, start_s);
}

// The round planned over the whole runnable queue, as the scheduler always did: its head ordered
// and the rest as the partial sort leaves it; all of it ordered if the GPUs are still not full.
// Sets head_fell_short unless the GPUs filled with jobs of the head alone.
std::vector<scheduling::JobPlacement> PlaceWholeQueue(
    EngineState& st, double start_s, size_t head,
    std::vector<const scheduling::SchedJob*>& runnable) {
  scheduling::OrderJobs(*st.policy, start_s, runnable, st.options.order, head);
  ResetLedger(st, start_s);
  std::vector<scheduling::JobPlacement> placements = st.mechanism->PlaceRound(runnable, *st.ledger);
  st.head_fell_short = runnable.size() > head;
  if (runnable.size() > head && st.ledger->free_gpus() > 0) {
    scheduling::OrderJobs(*st.policy, start_s, runnable, st.options.order);
    ResetLedger(st, start_s);
    placements = st.mechanism->PlaceRound(runnable, *st.ledger);
  } else if (runnable.size() > head && st.indexed) {  // a short queue never tries the head alone
    absl::flat_hash_set<int64_t> in_head;
    for (size_t i = 0; i < head; ++i) in_head.insert(runnable[i]->id);
    st.head_fell_short = !std::all_of(
        placements.begin(), placements.end(),
        [&in_head](const scheduling::JobPlacement& p) { return in_head.contains(p.job_id); });
  }
  return placements;
}

// The starvation guard's marks on a short queue, once its round is planned.
void MarkStarvingRunnable(EngineState& st, double start_s,
                          const std::vector<const scheduling::SchedJob*>& runnable) {
  if (st.options.order.starvation_s <= 0) return;
  for (const scheduling::SchedJob* job : runnable) {
    // `runnable` points into st.jobs (RunnableInArrivalOrder): no need to look each job up.
    scheduling::MarkStarving(start_s, st.options.order.starvation_s,
                             const_cast<scheduling::SchedJob&>(*job));
  }
}

// The starvation guard's marks on a long queue: only the jobs that have waited too long are read.
void MarkStarvingIndexed(EngineState& st, double start_s) {
  if (!st.starvation.enabled()) return;
  std::vector<int64_t> due;
  const auto waiting_since = [&st](int64_t id) {
    auto it = st.jobs.find(id);
    return it == st.jobs.end() ? -std::numeric_limits<double>::infinity()
                               : scheduling::WaitingSince(it->second.view);
  };
  st.starvation.Due(start_s, waiting_since, due);
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

}  // namespace

void EraseDoneJobs(EngineState& st) {
  for (int64_t id : st.done_in_queue) {
    if (st.jobs.erase(id) > 0) --st.queued;
  }
  st.done_in_queue.clear();
  if (st.queue.size() > 2 * static_cast<size_t>(st.queued) + 1024) {
    std::erase_if(st.queue, [&st](int64_t id) { return !st.jobs.contains(id); });
  }
}

bool HeadIsWholeOrder(EngineState& st, double start_s,
                      const std::vector<scheduling::QueuedJob>& head) {
  std::vector<const scheduling::SchedJob*> all = RunnableInArrivalOrder(st, start_s);
  if (all.size() != st.order.size()) return false;
  scheduling::OrderJobs(*st.policy, start_s, all, st.options.order, head.size());
  return std::equal(head.begin(), head.end(), all.begin(),
                    [](const scheduling::QueuedJob& kept, const scheduling::SchedJob* job) {
                      return kept == scheduling::QueuedJobOf(*job);  // the job, as it is now
                    });
}

std::vector<scheduling::JobPlacement> PlacePolicyOrder(EngineState& st, double start_s) {
  // The round's link capacities (slow links), before a placement scores candidates on them.
  if (st.fabric) st.fabric->AtTime(start_s);
  // A mechanism stops reading once the GPUs are full: a long queue offers it the head only.
  const size_t head = std::max<size_t>(4 * static_cast<size_t>(st.ledger->total_gpus()), 64);
  const auto queued = static_cast<size_t>(st.queued);
  if (!st.indexed && queued > IndexAbove(st, head)) SetIndexed(st, true, start_s);
  if (st.indexed && queued < IndexBelow(st, head)) SetIndexed(st, false, start_s);
  if (!st.indexed) {
    st.touched.clear();
    std::vector<const scheduling::SchedJob*> runnable = RunnableInArrivalOrder(st, start_s);
    std::vector<scheduling::JobPlacement> placements = PlaceWholeQueue(st, start_s, head, runnable);
    MarkStarvingRunnable(st, start_s, runnable);
    return placements;
  }
  RefileTouched(st, start_s);
  std::vector<scheduling::JobPlacement> placements;
  // A head of one job a GPU usually fills the GPUs. For a mechanism that reads only until they
  // are full, so does a head a little longer than the last round's placements (jobs come and go
  // a few at a time): about half as long when jobs span several GPUs. When a head does not fill
  // them, the next is tried: one job a GPU, 4 a GPU, then the whole queue.
  const size_t per_gpu = std::min<size_t>(head, st.ledger->total_gpus());
  const size_t guess = st.mechanism_definition->reads_until_full
                           ? std::min(per_gpu, st.head_placed + st.head_placed / 16 + 64)
                           : per_gpu;
  const std::array<size_t, 3> sizes = {guess, per_gpu, head};
  for (size_t k = 0; k < sizes.size() && !st.head_fell_short; ++k) {
    const size_t size = sizes[k];
    if (k > 0 && size == sizes[k - 1]) continue;  // tried already
    const std::vector<scheduling::QueuedJob>& runnable = OrderedHead(st, start_s, size);
    assert(HeadIsWholeOrder(st, start_s, runnable));
    ResetLedger(st, start_s);
    placements = st.mechanism->PlaceHead(runnable, *st.ledger);
    const bool full = st.order.size() <= size || st.ledger->free_gpus() == 0;
    if (full) break;
    st.head_fell_short = size == head;
  }
  st.head_placed = placements.size();
  if (st.head_fell_short) {
    // The mechanism reads on past the head (GREEDY with CPUs or memory gone, say): the round is
    // planned over the whole queue, so results never depend on the head. While this lasts the
    // head alone is not tried first.
    std::vector<const scheduling::SchedJob*> runnable = RunnableInArrivalOrder(st, start_s);
    placements = PlaceWholeQueue(st, start_s, head, runnable);
  }
  MarkStarvingIndexed(st, start_s);
  return placements;
}

void NoteExpectedSpeedups(EngineState& st, const std::vector<scheduling::JobPlacement>& placed) {
  if (!st.policy->key_reads_expected_speedup) return;  // the order does not depend on it
  // A job not placed in the round before expects its speed-up without a placement (Admit and
  // ApplyProfiles set it so): only last round's and this round's placed jobs change.
  const bool share_only = st.mechanism_definition->proportional_share_only;
  for (int64_t id : st.placed_last_round) {
    auto it = st.jobs.find(id);
    if (it == st.jobs.end()) continue;
    scheduling::SchedJob& view = it->second.view;
    view.expected_speedup = scheduling::ExpectedSpeedup(share_only, view, nullptr);
    Touch(st, id);
  }
  st.placed_last_round.clear();
  for (const scheduling::JobPlacement& p : placed) {
    scheduling::SchedJob& view = PlacedJob(st, p).view;
    view.expected_speedup = scheduling::ExpectedSpeedup(share_only, view, &p);
    Touch(st, p.job_id);
    st.placed_last_round.push_back(p.job_id);
  }
}

}  // namespace troupe::scheduling::engine_detail
