// The scheduler actor's pieces, shared by its source files: scheduler_actor.cpp (rounds),
// scheduler_arrivals.cpp (admitting jobs), scheduler_queue.cpp (the order between rounds),
// scheduler_standing.cpp (standing leases), scheduler_faults.cpp and scheduler_recovery.cpp
// (supervision, lost reports, recovery). Not an interface of its own.
#pragma once

#include <string>

#include "actors/scheduler_actor.hpp"
#include "messages/fault_messages.hpp"
#include "messages/profiling_messages.hpp"
#include "runtime/counted_send.hpp"

namespace troupe::scheduler_detail {

using Self = caf::stateful_actor<SchedulerState>;

inline constexpr int64_t kWakeUp = -1;  // a round timer that starts a round instead of ending one

// Something the queue's order or the starvation guard reads of the job may have changed (it
// ran, finished, failed, died, came back, got its profile): refiled when the next round is planned.
inline void Touch(SchedulerState& st, int64_t job_id) { st.touched.push_back(job_id); }
// The job is done (finished or failed): it leaves the queue when the round closes.
inline void NoteDone(SchedulerState& st, int64_t job_id) {
  st.done_in_queue.push_back(job_id);
  Touch(st, job_id);
}
// A round of a large cluster reads thousands of job entries scattered over the heap; one at a
// time, each waits for memory. So each step asks for the lines it reads of an entry a few jobs
// before it reads them, and only those: asking for all seven crowds the ones that matter.
inline constexpr size_t kPrefetchAhead = 4;  // jobs
// A round's lease (SendLeases, LeaseStands): the job's handle, its last lease, and its progress
// (a standing round taken as it stands).
inline void PrefetchForLease(const TrackedJob* job) {
  __builtin_prefetch(&job->view.iterations_left);
  __builtin_prefetch(&job->handle);
  __builtin_prefetch(&job->lease.offered_iterations);
}
// The report of a round the job's lease stood (TakeProgress): four lines of the seven.
inline void PrefetchForStandingReport(const TrackedJob* job) {
  __builtin_prefetch(&job->view.id);
  __builtin_prefetch(&job->view.last_served_s);
  __builtin_prefetch(&job->record.start_s);
  __builtin_prefetch(&job->record.wasted_gpu_s);
}

// The entry of the job a placement places: as the mechanism noted it, or through the view it was
// handed (an admitted job's view names its entry, SchedJob::owner), else by its id.
inline TrackedJob& PlacedJob(SchedulerState& st, const scheduling::JobPlacement& placement) {
  if (placement.owner != nullptr) return *static_cast<TrackedJob*>(placement.owner);
  if (placement.job != nullptr && placement.job->owner != nullptr) {
    return *static_cast<TrackedJob*>(placement.job->owner);
  }
  return st.jobs.find(placement.job_id)->second;
}

// Drops the jobs done since the last call from `jobs` and the queue's count.
void EraseDoneJobs(SchedulerState& st);

// The queue between rounds (scheduler_queue.cpp).
// Orders the runnable jobs at start_s by the policy, has the mechanism place them on the ledger
// (emptied, less dead servers), and applies the starvation guard's marks.
std::vector<scheduling::JobPlacement> PlacePolicyOrder(SchedulerState& st, double start_s);
// Debug check: `head` is the head of the whole runnable queue sorted by OrderJobs, each job as
// it is now.
bool HeadIsWholeOrder(SchedulerState& st, double start_s,
                      const std::vector<scheduling::QueuedJob>& head);
// What SRTF and FTF will take each job's speed to be next round (scheduling::ExpectedSpeedup).
void NoteExpectedSpeedups(SchedulerState& st, const std::vector<scheduling::JobPlacement>& placed);

// Starts the round at start_s: pulls arrivals (and profiles), then plans.
void BeginRound(Self* self, double start_s);
// A job's report: taken once, for the round in flight (else dropped as stray).
void OnProgress(Self* self, const JobProgress& progress);
// OnProgress for a job already looked up (nullptr: not tracked).
void OnProgressOf(Self* self, TrackedJob* job, const JobProgress& progress);
// Takes a report OnProgress accepted (or a standing lease's) into the job's records and the round.
void TakeProgress(Self* self, TrackedJob& job, const JobProgress& progress);
// TakeProgress of a report that the job ran this round on `gpus` GPUs and goes on with
// `iterations_left`, under a policy whose key is constant (nothing to refile), without the report
// and as its lease stands (scheduler_standing.cpp): the round does not await it.
void TakeRunGoingOn(SchedulerState& st, TrackedJob& job, int32_t gpus, int64_t iterations_left);
// Files a report sent for the round's end (JobProgress.for_round_end) that came before the
// round's timer; false when it is to be taken now.
bool FileForRoundEnd(Self* self, JobProgress& progress);
// The round's timer fired: closes the round once every leased job reported, taking the filed
// reports first.
void OnRoundTimer(Self* self);

// Standing leases (scheduler_standing.cpp).
enum class LeaseFate {
  kGranted,      // granted anew: the job hears of it
  kStands,       // stands: listed to its servers, which extend or book it when they next hear
  kStandsTaken,  // stands, and its report of the round is taken already (TakeRunGoingOn)
};
// Whether the job's lease stands this round as `placement` (the round's index-th) orders it: its
// report of the round before offered a rate for a round of this length and this share. Either
// way notes where its report falls among the round's and where its parts are. Granted:
// *rounds_stood is what the job's new grant tells it (rounds stood since its last). Stands and
// the job goes on under a constant key: its report of the round is taken now (kStandsTaken).
LeaseFate LeaseStands(SchedulerState& st, TrackedJob& job,
                      const scheduling::JobPlacement& placement, size_t index,
                      int32_t* rounds_stood);
// Keeps what the job's report offers for a further round of its lease (a report the job sent).
void NoteStandingOffer(SchedulerState& st, TrackedJob& job, const JobProgress& progress);
// Takes the round's filed reports and the reports of its standing leases, in the order the jobs
// would have sent them all.
void TakeRoundReports(Self* self);

// Sends every server that hears of the round its share of the round's placements: grants, and
// the parts that stand (scheduler_leases.cpp). Returns the reports the round awaits: one a placed
// job, less those taken as their lease stands.
size_t SendLeases(Self* self, const std::vector<scheduling::JobPlacement>& placements);

// Tracks and watches arrived jobs; returns what the profiler must measure of them.
std::vector<ProfileAsk> Admit(Self* self, std::vector<ArrivedJob>& arrived);
void ApplyProfiles(Self* self, ProfileBatch& batch);
// Plans and leases the round starting at start_s (or sleeps until the next arrival).
void PlanRound(Self* self, double start_s);
// Closes the round once its timer fired and every leased job reported (or is dead).
void MaybeCloseRound(Self* self);

// The scheduler's requests (Ask) are asked again every round while the network drops them; when
// `who` stays unreachable the run ends with that reason rather than waiting for ever.
AskRetry RetryEveryRound(const SchedulerState& st);
void Unreachable(Self* self, const std::string& who);

// Monitors a job's actor so that its death arrives as a down message.
void WatchJob(Self* self, TrackedJob& job);
// Records a job that finished at end_s (once) and stops its actor.
void RecordFinished(Self* self, TrackedJob& job, double end_s);
// Records a job that failed, with the reason, stops its actor if it still lives, and drops it
// from the queue at the round's close.
void RecordFailed(Self* self, TrackedJob& job, const std::string& reason);

// Fault handling (scheduler_faults.cpp).
void WatchServers(Self* self);
void OnDown(Self* self, const caf::down_msg& down);
void OnFaultNotice(Self* self, const FaultNotice& notice);
void OnJobRespawned(Self* self, JobRespawned& respawned);
void OnServerNotice(Self* self, const ServerNotice& notice);
void OnServerUp(Self* self, ServerUp& up);
// Fails every queued job that the mechanism will never place on the servers not lost for good
// (Mechanism::WhyNeverPlaced; a server down without a restart announced is lost for good): the
// jobs that arrived since the last call, and the whole queue when what survives changed. Called
// before each round is planned.
void FailJobsThatNoLongerFit(Self* self);
// A round's reports are still missing after the grace period: ask again.
void OnGrace(Self* self, int64_t round);
// Schedules OnGrace for the current round if reports are missing and the run has faults.
void ArmGrace(Self* self);
// A restarted scheduler: rebuild from the workload and the checkpoint store, then resume.
void Recover(Self* self);

}  // namespace troupe::scheduler_detail
