// The job actor: one training job. It holds its model, the iterations it has left and its true
// throughput function of (GPUs, CPUs, memory): the model's sensitivity matrix.
//
// On a lease — all of its parts, for a gang job spread over servers; none if any part was refused
// — it advances as Synergy's round semantics say: floor(lease / (iteration time / speedup))
// iterations, speedup read from the matrix at its CPUs and memory per GPU (times the slowest
// server's speed, when a `slow` fault made one a straggler). The work is committed — checkpointed,
// to the checkpoint store when the run has faults — when the lease ends, on the run's clock; the
// job then reports to the scheduler that ordered the lease. If a server of the lease dies first
// (LeaseLost) the lease's work is lost and the job reports at once that it did not run. A lost
// report is re-sent when the scheduler asks (ProgressQuery). The job lives until the scheduler has
// recorded its end and stops it.
//
// Real compute (RunConfig.backends.compute other than "emulated", real mode; docs/gpu.md): when
// all parts of a lease are granted the job sends each part's server the part's work (PartWork);
// the server spawns a compute worker in its own process — a `troupe node` for a placed server —
// that runs real steps on the part's GPUs until the lease's end and answers the measured seconds
// per iteration (PartDone). A gang over several servers exchanges its gradient across the parts
// (the job hands the workers' all-reduce ranks their AllReduceGroup). The job commits at the
// later of its lease timer and the last part's answer, the slowest part's measured time taking
// iter_time_s's place in the formula above; a part that failed credits nothing for the lease
// (logged). LeaseLost, a report forced by a ProgressQuery (one that finds the workers still
// running is answered when they are done, unless they are a whole lease late) or a newer lease
// stops the workers and discards their answers.
//
// A gang's training continues across leases: the job keeps the weights the last lease ended with
// and its exchange index (JobCheckpoint.gang, so they are checkpointed with its progress and a
// restarted job resumes from them), sends them to the next lease's workers, and takes back the
// weights part 0 sends after its last exchange (messages/gang_weights.hpp). They are committed
// with the lease's iterations; weights that do not come back whole (their hash differs from the
// parts') fail the lease like a failed part.
#pragma once

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <map>
#include <memory>
#include <vector>

#include "actors/agent/agent_messages.hpp"
#include "actors/compute_worker_actor.hpp"
#include "faults/checkpoint_cadence.hpp"
#include "messages/actor_interfaces.hpp"
#include "messages/atoms.hpp"
#include "messages/cluster_messages.hpp"
#include "messages/lease_assembly.hpp"
#include "runtime/actor_context.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {

// Where a job starts from: a new job from nothing, a restarted one from its checkpoint.
struct JobStart {
  JobCheckpoint from;  // from.iterations_left < 0: all of spec.iterations
  // A crashed job started again (from its checkpoint, or from the start when it died before its
  // first one): it pays the restart.
  bool respawned = false;
  caf::actor checkpoints;  // the checkpoint store; none when the run has no faults
  std::shared_ptr<const JobCompute> compute;  // real compute; none: the emulated throughput
  // Emulated and without faults nothing can take a lease away: the job commits its work when the
  // lease is granted and sends its report to arrive at the lease end — one timed message a
  // lease instead of a timer and a report. The records are the same.
  bool commit_at_grant = false;
  // Emulated with faults that standing leases survive (runner/cluster/cluster_run.cpp): the job
  // commits at each lease's end as under faults, and its report offers to keep the lease.
  bool offers_standing = false;
  // faults.recovery: checkpoints and restarts at a cost (docs/faults.md, "Recovery"); none: a
  // checkpoint at every lease's end, free, and restarts free.
  std::shared_ptr<const RecoveryPlan> recovery;
};

// The lease being assembled from its parts, then run.
struct JobLease {
  LeaseAssembly assembly;                   // the servers' grants (messages/lease_assembly.hpp)
  std::map<int32_t, server_actor> servers;  // the granting server actors, by server index
  // Real compute: the parts' work, from PartWork sent to the last PartDone.
  int32_t parts_running = 0;              // asked and not answered
  std::map<int32_t, int32_t> part_rank;   // server index -> the part's rank in a gang
  std::map<int32_t, caf::actor> workers;  // by server index, once started
  std::vector<caf::actor> ranks;          // a gang's all-reduce ranks, by part rank
  int32_t parts_started = 0;
  std::vector<PartDone> done;        // the parts' answers
  GangWeightsAssembly returned;      // a gang's weights after the lease, from part 0
  GangState trained;                 // committed with the lease (weights none: nothing trained)
  bool timer_fired = false;          // the lease's end passed; the report waits for the workers
  double seconds_per_iteration = 0;  // measured; 0 if the work failed
  int64_t steps = 0;
};

// What a lease's report offered to keep the lease (JobProgress.standing_iterations): the
// iterations of each further round, and what such a round holds.
struct StandingOffer {
  int64_t iterations = -1;  // -1: no offer
  int32_t gpus = 0;
  double lease_s = 0;
  // With offers_standing: the seconds of one iteration (faults.recovery credits each round
  // stood from the cadence) and the lease's parts, which a standing lease cut runs on again.
  double iteration_s = 0;
  std::vector<LeasePart> parts;
};

struct JobActorState {
  JobSpec spec;
  std::shared_ptr<const ModelCatalog> catalog;  // keeps `profile` alive
  const ModelProfile* profile = nullptr;
  scheduler_actor scheduler;
  caf::actor checkpoints;
  bool commit_at_grant = false;
  bool offers_standing = false;  // JobStart::offers_standing
  ActorContext ctx;
  JobCheckpoint account;  // the committed state: what a checkpoint holds
  JobLease lease;
  JobProgress last_report;                    // re-sent on a ProgressQuery
  StandingOffer offer;                        // with commit_at_grant: the last lease's
  std::shared_ptr<const JobCompute> compute;  // none: the emulated throughput
  gpu::StepPlan step_plan;                    // with compute: the model's step
  // The last speedup read from the matrix and where: a job mostly gets the same share every
  // round, and interpolating the matrix again would give the same number.
  double speedup_cpus_per_gpu = -1;
  double speedup_memory_gb_per_gpu = -1;
  double speedup = 0;
  // faults.recovery: this job's costs, and what it spent since its last report.
  bool recovery = false;
  CheckpointCosts costs;
  // on_server_loss continue_smaller: the fewest GPUs it runs on after losing servers (0: all).
  int32_t min_gpus = 0;
  // Of the job's GPU-seconds of training since its last checkpoint, those its smaller leases
  // did not hold: a failure wastes only the GPUs that trained.
  double unsaved_short_gpu_s = 0;
  JobRecovery unreported;
  double unreported_wasted_gpu_s = 0;  // lost before a respawn, reported with the next lease
  // workload.replay_job_failures: the trace's attempt the job is in (an index into
  // spec.crashed_attempts_s) and the seconds it has held its GPUs in it. An actor respawned after
  // a crash fault starts again from the first.
  size_t attempt = 0;
  double attempt_held_s = 0;
  static inline const char* name = "troupe.job";
};

// LeaseLost.server of the crash that ends one of the trace's attempts (JobSpec.crashed_attempts_s):
// the job sends it to itself, as its own process failing.
inline constexpr int32_t kAttemptEnded = -1;

// What a job's actor handles: the lease protocol (job_actor, messages/actor_interfaces.hpp), its
// own lease timer, and its real-compute parts' messages (from compute workers).
using emulated_job_actor =
    job_actor::extend<caf::reacts_to<lease_end_atom, double>, caf::reacts_to<PartStarted>,
                      caf::reacts_to<PartDone>, caf::reacts_to<GangWeights>>;

emulated_job_actor::behavior_type JobActor(emulated_job_actor::stateful_pointer<JobActorState> self,
                                           JobSpec spec,
                                           std::shared_ptr<const ModelCatalog> catalog,
                                           scheduler_actor scheduler, ActorContext ctx,
                                           JobStart start);

}  // namespace troupe
