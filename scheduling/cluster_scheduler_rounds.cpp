// A round of the engine (cluster_scheduler.hpp): planned and leased, its reports taken, closed;
// and the end of the run.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "scheduling/cluster_scheduler_internal.hpp"

namespace troupe::scheduling::engine_detail {
namespace {

// True once every measured job has arrived and finished (only with a measurement window).
bool MeasuredJobsDone(const EngineState& st) {
  const ClusterSchedulerOptions& o = st.options;
  if (o.measure_first_job < 0) return false;
  const int64_t window = o.measure_last_job - o.measure_first_job + 1;
  const bool all_arrived = st.next_arrival_s < 0 || st.measured_arrived == window;
  return all_arrived && st.measured_ended == st.measured_arrived;
}

// A down server comes back at start_s: its ServerUp is due at this instant.
bool RepairDueAt(const EngineState& st, double start_s) {
  return std::find(st.server_back_at_s.begin(), st.server_back_at_s.end(), start_s) !=
         st.server_back_at_s.end();
}

// Nothing to run: sleep until the round in which the next job arrives, or end the run.
void Idle(EngineState& st, double start_s) {
  if (st.next_arrival_s < 0) return EndRun(st, "all jobs finished");
  const double round_s = st.options.round_s;
  double wake_s = std::ceil(st.next_arrival_s / round_s) * round_s;
  if (wake_s <= start_s) wake_s = start_s + round_s;
  st.out->WakeAt(wake_s);
}

// A round the job ran, in its entry.
void CreditRun(const EngineState& st, TrackedJob& job, int32_t gpus, int64_t iterations_left,
               double held_s) {
  if (st.fabric) st.fabric->Credit(job.view.id, job.view.iterations_left - iterations_left);
  job.view.iterations_left = iterations_left;
  job.view.attained_gpu_s += gpus * held_s;
  job.view.last_served_s = st.current.end_s;
  job.record.gpu_seconds += gpus * held_s;
  ++job.record.rounds_run;
  if (job.record.start_s < 0) job.record.start_s = st.current.start_s;
}

}  // namespace

void EndRun(EngineState& st, std::string reason) {
  st.ended = true;
  for (int64_t id : st.queue) {
    auto it = st.jobs.find(id);
    if (it != st.jobs.end() && !it->second.done) st.out->RecordJob(it->second.record);
  }
  if (st.fabric) st.out->RecordJobNetwork(JobNetworkBatch{st.fabric->SpentByJob()});
  if (st.options.recovery) {
    JobRecoveryBatch batch;
    for (const auto& [id, costs] : st.recovery) batch.jobs.push_back({id, costs});
    std::sort(
        batch.jobs.begin(), batch.jobs.end(),
        [](const JobRecoveryRecord& a, const JobRecoveryRecord& b) { return a.job_id < b.job_id; });
    st.out->RecordJobRecovery(std::move(batch));
  }
  const double end_s = st.round >= 0 ? st.current.end_s : 0;
  std::vector<int64_t> with_actors;
  for (int64_t id : st.queue) {
    auto it = st.jobs.find(id);
    if (it != st.jobs.end() && it->second.has_actor) with_actors.push_back(id);
  }
  st.out->EndRun(RunEnd{std::move(reason), end_s, st.round + 1}, with_actors);
}

void PlanRound(EngineState& st, double start_s) {
  // A round's arrivals are asked for again when their answer is late, and both answers may come
  // (the workload's at-least-once retry): the second plans nothing, for a round is planned once.
  if (start_s <= st.planned_start_s) return;
  // Granted leases' reports come after the repair at their round's end; a round whose leases all
  // stand closes on its timer alone and would be planned before it.
  if (st.deferred_start_s != start_s && RepairDueAt(st, start_s)) {
    st.deferred_start_s = start_s;
    return st.out->PlanAtInstantEnd(start_s);
  }
  st.planned_start_s = start_s;
  FailJobsThatNoLongerFit(st);
  st.mechanism->Recycle(std::move(st.round_placements));  // the last round's storage
  st.round_placements.clear();
  st.mechanism->StartRound(st.round + 1, start_s);
  // A progress display reads it (a round's planning can take minutes: OPT on a large cluster).
  st.out->Planning(true);
  std::vector<JobPlacement> placements = PlacePolicyOrder(st, start_s);
  if (!st.shrunk.empty()) PlaceShrunkJobs(st, placements);
  st.out->Planning(false);
  NoteExpectedSpeedups(st, placements);
  if (st.queued == 0) return Idle(st, start_s);

  ++st.round;
  st.relets.clear();  // a new round: no job is relet in it yet
  st.current = RoundRecord{};
  st.current.round = st.round;
  st.current.start_s = start_s;
  st.current.end_s = start_s + st.options.round_s;
  st.current.jobs_running = static_cast<int32_t>(placements.size());
  st.current.jobs_queued =
      static_cast<int32_t>(st.queued - static_cast<int64_t>(placements.size()));
  st.awaiting_reports = static_cast<int32_t>(LeaseRound(st, placements));
  st.round_placements = std::move(placements);
  st.round_timer_fired = false;
  st.grace_pending = false;
  st.out->RoundLeased(start_s);
  st.out->EndRoundAt(st.round, st.current.end_s);
}

void MaybeCloseRound(EngineState& st) {
  if (!st.round_timer_fired) return;
  if (st.awaiting_reports > 0) return ArmGrace(st);
  EraseDoneJobs(st);
  if (st.options.lease_log) {
    // Reports arrive in any order in real mode; the log is sorted so both modes write the same.
    std::sort(st.round_leases.begin(), st.round_leases.end(),
              [](const LeaseRecord& a, const LeaseRecord& b) {
                return std::tie(a.job_id, a.server) < std::tie(b.job_id, b.server);
              });
    st.out->RecordLeases(LeaseBatch{std::move(st.round_leases)});
    st.round_leases.clear();
  }
  if (st.fabric) {
    LinkBatch links;
    st.fabric->CloseRound(st.round, st.current.start_s, st.current.end_s, &links.links);
    if (!links.links.empty()) st.out->RecordLinks(std::move(links));
  }
  st.out->RecordRound(st.current);
  if (MeasuredJobsDone(st)) return EndRun(st, "measured jobs finished");
  st.out->StartRound(st.current.end_s);
}

void RecordFinished(EngineState& st, TrackedJob& job, double end_s) {
  // workload.replay_job_failures: a job the trace records as failed fails where it would finish.
  if (auto failed = st.trace_ends.find(job.record.job_id); failed != st.trace_ends.end()) {
    return RecordFailed(st, job,
                        std::string("failed in the trace: ") + TraceEndName(failed->second));
  }
  job.done = true;
  NoteDone(st, job.record.job_id);
  if (st.fabric) st.fabric->Forget(job.record.job_id);
  job.record.end_s = end_s;
  job.record.jct_s = job.record.end_s - job.record.arrival_s;
  if (st.round >= 0 && end_s == st.current.end_s) ++st.current.jobs_finished;
  if (job.record.measured) ++st.measured_ended;
  st.out->JobEnded(job.record, job.has_actor);
}

void RecordFailed(EngineState& st, TrackedJob& job, const std::string& reason) {
  job.done = true;
  NoteDone(st, job.record.job_id);
  if (st.fabric) st.fabric->Forget(job.record.job_id);
  job.record.failure = reason;
  if (job.record.measured) ++st.measured_ended;
  st.out->JobEnded(job.record, job.has_actor);
  job.has_actor = false;  // alive, but it can never run: stopped
}

void OnProgress(EngineState& st, const JobProgress& p) {
  auto it = st.jobs.find(p.job_id);
  TrackedJob* job = it == st.jobs.end() ? nullptr : &it->second;
  // Under faults, after the round's timer: standing reports wait to be taken among these.
  if (st.standing_next < st.standing_closing.size()) return TakeAmongStanding(st, job, p);
  OnProgressOf(st, job, p);
}

void OnProgressOf(EngineState& st, TrackedJob* job, const JobProgress& p) {
  // A report of no round in flight, or one taken already: stray (a lost report asked again).
  if (job == nullptr || p.round != st.round || job->done) return;
  if (!st.relets.empty() && TakeReportBeforeRelet(st, *job, p)) return;
  if (job->reported_round == p.round) return;
  NoteStandingOffer(st, *job, p);
  TakeProgress(st, *job, p);
}

void TakeRunGoingOn(EngineState& st, TrackedJob& job, int32_t gpus, int64_t iterations_left) {
  job.reported_round = static_cast<int32_t>(st.round);
  CreditRun(st, job, gpus, iterations_left, st.options.round_s);
}

void TakeProgress(EngineState& st, TrackedJob& job, const JobProgress& p) {
  job.reported_round = static_cast<int32_t>(p.round);
  if (st.options.lease_log) {
    for (const LeasePart& part : p.parts) {
      st.round_leases.push_back(
          LeaseRecord{p.round, p.job_id, part.server, part.gpu_ids, part.cpus, part.memory_gb});
    }
  }
  job.record.wasted_gpu_s += p.wasted_gpu_s;
  if (st.options.recovery) st.recovery[p.job_id] += p.recovery;
  if (p.ran) CreditRun(st, job, p.gpus, p.iterations_left, HeldInRound(st, p));
  // A failure rolled the job back to its last checkpoint (faults.recovery): its work since then
  // is to be done again.
  if (p.rolled_back) job.view.iterations_left = p.iterations_left;
  // Under a constant key (FIFO) a job that ran and goes on keeps its place in the queue's order,
  // and the starvation guard's entry for it stays a lower bound (its wait only starts later):
  // there is nothing to refile.
  if (!(st.policy->constant_key && p.ran && !p.finished)) Touch(st, p.job_id);
  if (p.finished) RecordFinished(st, job, st.current.end_s);
  --st.awaiting_reports;
  MaybeCloseRound(st);
}

}  // namespace troupe::scheduling::engine_detail
