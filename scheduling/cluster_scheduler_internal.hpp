// The round engine's steps (cluster_scheduler.hpp), shared by its source files; each works on
// the engine's state (cluster_scheduler_state.hpp). Not an interface of its own.
#pragma once

#include <string>
#include <vector>

#include "scheduling/cluster_scheduler_state.hpp"

namespace troupe::scheduling::engine_detail {

// Something the queue's order or the starvation guard reads of the job may have changed (it
// ran, finished, failed, died, came back, got its profile): refiled when the next round is planned.
inline void Touch(EngineState& st, int64_t job_id) { st.touched.push_back(job_id); }
// The job is done (finished or failed): it leaves the queue when the round closes.
inline void NoteDone(EngineState& st, int64_t job_id) {
  st.done_in_queue.push_back(job_id);
  Touch(st, job_id);
}
// A round of a large cluster reads thousands of job entries scattered over the heap; one at a
// time, each waits for memory. So each step asks for the lines it reads of an entry a few jobs
// before it reads them, and only those: asking for all seven crowds the ones that matter.
inline constexpr size_t kPrefetchAhead = 4;  // jobs
// A round's lease (LeaseRound, LeaseStands): the job's progress, whether it has an actor, and its
// last lease (a standing round taken as it stands).
inline void PrefetchForLease(const TrackedJob* job) {
  __builtin_prefetch(&job->view.iterations_left);
  __builtin_prefetch(&job->has_actor);
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
inline TrackedJob& PlacedJob(EngineState& st, const JobPlacement& placement) {
  if (placement.owner != nullptr) return *static_cast<TrackedJob*>(placement.owner);
  if (placement.job != nullptr && placement.job->owner != nullptr) {
    return *static_cast<TrackedJob*>(placement.job->owner);
  }
  return st.jobs.find(placement.job_id)->second;
}

// Drops the jobs done since the last call from `jobs` and the queue's count.
void EraseDoneJobs(EngineState& st);

// The queue between rounds (cluster_scheduler_queue.cpp).
// Orders the runnable jobs at start_s by the policy, has the mechanism place them on the ledger
// (emptied, less dead servers), and applies the starvation guard's marks.
std::vector<JobPlacement> PlacePolicyOrder(EngineState& st, double start_s);
// Debug check: `head` is the head of the whole runnable queue sorted by OrderJobs, each job as
// it is now.
bool HeadIsWholeOrder(EngineState& st, double start_s, const std::vector<QueuedJob>& head);
// What SRTF and FTF will take each job's speed to be next round (ExpectedSpeedup).
void NoteExpectedSpeedups(EngineState& st, const std::vector<JobPlacement>& placed);

// Starts the round at start_s, once its arrivals are in (cluster_scheduler.cpp).
void PlanRound(EngineState& st, double start_s);
// A job's report: taken once, for the round in flight (else dropped as stray).
void OnProgress(EngineState& st, const JobProgress& progress);
// OnProgress for a job already looked up (nullptr: not tracked).
void OnProgressOf(EngineState& st, TrackedJob* job, const JobProgress& progress);
// Takes a report OnProgress accepted (or a standing lease's) into the job's records and the round.
void TakeProgress(EngineState& st, TrackedJob& job, const JobProgress& progress);
// TakeProgress of a report that the job ran this round on `gpus` GPUs and goes on with
// `iterations_left`, under a policy whose key is constant (nothing to refile), without the report
// and as its lease stands (cluster_scheduler_standing.cpp): the round does not await it.
void TakeRunGoingOn(EngineState& st, TrackedJob& job, int32_t gpus, int64_t iterations_left);
// Closes the round once its timer fired and every leased job reported (or is dead).
void MaybeCloseRound(EngineState& st);
void EndRun(EngineState& st, std::string reason);

// Standing leases (cluster_scheduler_standing.cpp).
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
// A job whose communication over the fabric changed since its last round is granted anew.
LeaseFate LeaseStands(EngineState& st, TrackedJob& job, const JobPlacement& placement, size_t index,
                      bool network_changed, int32_t* rounds_stood);
// Keeps what the job's report offers for a further round of its lease (a report the job sent).
void NoteStandingOffer(EngineState& st, TrackedJob& job, const JobProgress& progress);
// Takes the round's filed reports and the reports of its standing leases, in the order the jobs
// would have sent them all. Under faults, where the granted leases' reports come after the
// timer, the standing ones still due are taken among those (TakeAmongStanding).
void TakeRoundReports(EngineState& st);
// Under faults, after the round's timer: a granted lease's report `p`, with the standing reports
// that the jobs would have sent before it; after the last granted one, the rest.
void TakeAmongStanding(EngineState& st, TrackedJob* job, const JobProgress& p);
// A failure of `server` cuts the job's lease of the round in flight: the job is told
// (LeaseLost), with the rounds its last lease stood since its last grant (LeaseLost.rounds_stood:
// the lease's grants may never reach it); a lease standing into this round is no longer credited
// at the round's close.
void LoseLeaseOn(EngineState& st, int64_t job_id, int32_t server);

// Tells every server that hears of the round its share of the round's placements: grants, and
// the parts that stand (cluster_scheduler_leases.cpp). Returns the reports the round awaits: one
// a placed job, less those taken as their lease stands.
size_t LeaseRound(EngineState& st, const std::vector<JobPlacement>& placements);

// Arrivals (cluster_scheduler_arrivals.cpp).
std::vector<ProfileAsk> Admit(EngineState& st, std::vector<Arrival>& arrived);
void ApplyProfiles(EngineState& st, ProfileBatch& batch);

// Records a job that finished at end_s (once) and stops its actor.
void RecordFinished(EngineState& st, TrackedJob& job, double end_s);
// Records a job that failed, with the reason, stops its actor if it still has one, and drops it
// from the queue at the round's close.
void RecordFailed(EngineState& st, TrackedJob& job, const std::string& reason);

// Faults (cluster_scheduler_faults.cpp).
// The job is leased this round and has not reported.
bool AwaitedThisRound(const EngineState& st, const TrackedJob& job);
// Fails every queued job that the mechanism will never place on the servers not lost for good
// (Mechanism::WhyNeverPlaced; a server down without a restart announced is lost for good): the
// jobs that arrived since the last call, and the whole queue when what survives changed. Called
// before each round is planned.
void FailJobsThatNoLongerFit(EngineState& st);
// Arms the grace timer for the current round if reports are missing and the run has faults.
void ArmGrace(EngineState& st);

// Spare servers (cluster_scheduler_spares.cpp).
// The pool at the start: the last options.spare_servers servers.
void MarkSpares(EngineState& st);
// The server's capacity is out of the round's plan: down, or in the spare pool.
inline bool HeldOut(const EngineState& st, int32_t server) {
  return !st.server_up[server] || st.spare[server];
}
// The job's lease of the round in flight lost `failed` at now_s (it was told): with an up spare
// of the same shape in the pool, the spare takes the failed server's part, the failed server
// takes the spare's place in the pool, and the job's parts are granted anew from now_s to the
// round's end. False when no spare serves.
bool ReletOnSpare(EngineState& st, JobPlacement& placement, int32_t failed, double now_s);
// Grants the placement's parts anew from now_s to the round's end: the job's relet.
void GrantRelet(EngineState& st, const JobPlacement& placement, double now_s);

// Elastic jobs (cluster_scheduler_elastic.cpp).
// With continue_smaller: the job's lease lost `failed` at now_s (it was told), and it goes on
// at once on the parts it kept if they hold at least the fraction of its GPUs. False otherwise.
bool ReletSmaller(EngineState& st, JobPlacement& placement, int32_t failed, double now_s);
// The jobs running smaller that the round's placements left out keep the parts they ran on,
// where those are still free; a job placed whole has grown back.
void PlaceShrunkJobs(EngineState& st, std::vector<JobPlacement>& placements);

// Where the job's lease of the round in flight starts: its relet's start, or the round's.
double LeaseStartOf(const EngineState& st, int64_t job_id);
// The job was relet at now_s already (another of its servers failed at the same instant).
bool ReletAt(const EngineState& st, int64_t job_id, double now_s);
// A report of a lease that a relet replaced: taken once (what it lost), and the relet's report
// is awaited still. True when the report was such (taken, or a copy dropped).
bool TakeReportBeforeRelet(EngineState& st, TrackedJob& job, const JobProgress& p);
// The seconds of the round the job's report `p` ran: a relet's from its start.
double HeldInRound(const EngineState& st, const JobProgress& p);

}  // namespace troupe::scheduling::engine_detail
