// The scheduler actor: round-based, as Synergy is.
//
// Each round (default 300 s of virtual time) it pulls the jobs that have arrived from the
// workload (and, unless profiling is oracle, has the profiler estimate their sensitivity; a job
// runs once its profile is ready), orders the runnable ones with a policy, places them with a
// mechanism (both plain C++ in scheduling/), and sends each server its round's leases. It then
// waits for the round's timer and for every leased job's progress report before planning the next
// round — a barrier that makes real mode agree with emulated mode. Finished jobs are recorded (JCT
// = end of the round in which the job finished - arrival). With nothing queued it sleeps until the
// round of the next arrival. The run ends when the measured jobs (or all jobs) have finished, or at
// the deadline; then it tells every actor to exit.
//
// Faults (docs/faults.md): it monitors every server and job, so it learns of a death by a down
// message, not by a timeout guess. A dead server's capacity leaves the plan until it restarts
// (ServerUp) and the jobs leased on it lose their lease (LeaseLost: a gang job loses all its
// GPUs). A server that will not restart (its ServerNotice says never, or none came: a dead
// `troupe node`) is lost for good: at each round's start every job that needs more GPUs than the
// other servers have fails with the reason, so that a run never waits for capacity that is gone. A
// dead job is requeued when the injector said it restarts (FaultNotice, JobRespawned) and reported
// failed with the reason otherwise. Reports still missing report_grace_s after a round's end are
// asked for again (ProgressQuery). A restarted scheduler (options.recover) rebuilds its state from
// the workload's jobs and the checkpoint store, and resumes at the next round.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>
#include <absl/container/node_hash_map.h>
#include <absl/hash/hash.h>

#include <caf/actor_addr.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/job_spawner.hpp"
#include "messages/cluster_messages.hpp"
#include "messages/records.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"
#include "scheduling/cluster_ledger.hpp"
#include "scheduling/mechanism_registry.hpp"
#include "scheduling/policy_registry.hpp"
#include "scheduling/queue_order.hpp"
#include "scheduling/starvation_guard.hpp"

namespace troupe {

// Each model's speed on every GPU type of the run, by type index (SchedJob::type_speed).
using TypeSpeedsByModel =
    absl::flat_hash_map<std::string, std::shared_ptr<const std::vector<double>>>;

struct SchedulerOptions {
  // Registered names (policy_registry.hpp, mechanism_registry.hpp); the run checked them.
  std::string policy = "fifo";
  std::string mechanism = "proportional";
  scheduling::MechanismOptions mechanism_options;
  double round_s = 300;
  scheduling::OrderOptions order;  // starvation guard, FTF's direction: scheduling::OrderJobs
  int64_t measure_first_job = -1;  // -1: every job is measured
  int64_t measure_last_job = -1;
  double deadline_s = 0;      // 0: none
  bool lease_log = false;     // forward every lease part to the metrics recorder
  double report_grace_s = 0;  // 0: wait for every report (a run without faults)
  bool recover = false;       // a restarted scheduler: rebuild state first
  // A job whose report offers to keep its lease (JobProgress.standing_iterations) and whom the
  // next round gives the same share keeps it: no grant, no report (messages/cluster_messages.hpp).
  bool standing_leases = false;
  // GPU types (docs/heterogeneity.md): each server's type index (empty: all 0), and each model's
  // speed on every type (null: 1 everywhere, a cluster that names no type).
  std::vector<int32_t> server_gpu_types;
  std::shared_ptr<const TypeSpeedsByModel> type_speeds;
};

struct ClusterHandles {
  std::vector<ServerSpec> specs;
  std::vector<caf::actor> servers;  // same order as specs
  caf::actor workload;
  caf::actor metrics;
  caf::actor profiler;     // none with oracle profiling: the workload's matrices are the truth
  caf::actor checkpoints;  // with faults: the checkpoint store
  caf::actor injector;     // with faults: the fault injector
  // Spawns the actor of a job that arrived without one (a run without faults) when it is first
  // placed: until then a waiting job is its TrackedJob alone.
  JobSpawner jobs;
};

// A part of a lease as the job's progress sees it: its size and its GPUs' speed for the job.
struct PartShape {
  int32_t gpus = 0;
  double cpus = 0;
  double memory_gb = 0;
  double type_speed = 1;
  bool operator==(const PartShape&) const = default;
  auto operator<=>(const PartShape&) const = default;
};

// A lease's parts as the job sees them, sorted; one part (a job on one server) kept inline.
using PartShapes = absl::InlinedVector<PartShape, 1>;

// A job's last lease, for standing leases (SchedulerOptions.standing_leases). Its shapes (what
// the job's progress reads) are its parts' (PartShapes): kept as parts alone, it fills one cache
// line.
struct LeaseHeld {
  static constexpr uint64_t kNever = UINT64_MAX;  // report_key of a job never leased

  scheduling::PlacementParts parts;  // the last round's, where they were (servers hold them)
  int64_t offered_iterations = -1;   // a further round's iterations (-1: no offer)
  double lease_s = 0;                // the length of the round offered for
  uint64_t report_key = kNever;      // this round: where its report falls among the round's
  int32_t offer_round = -1;          // the round whose report offered to keep it
  int32_t rounds_stood = 0;          // since its last grant: the next grant tells the job

  // Leased at least once (and not done: it leaves with the job).
  bool held() const { return report_key != kNever; }
};
static_assert(sizeof(LeaseHeld) == 64, "a job's last lease fills one cache line");

// A job the scheduler knows of. Every running job's entry is read several times a round, so it
// is kept to 440 bytes: with the table's key, one 448-byte block of seven cache lines. Its fields
// are in the order a round reads them, so that a round reads three of those lines, each once: the
// first holds the key and what a round leaves alone (ready_at_s, then SchedJob's first fields);
// the second what a placement reads of the view (a long queue's rounds read the order's copy of
// it instead, scheduling::QueuedJob, and leave this line alone too); the third and fourth what
// the round's lease reads and writes (the view's progress, the handle, the last lease, the
// record's first fields).
struct TrackedJob {
  double ready_at_s = 0;        // its profile is ready then; it may run from the next round start
  scheduling::SchedJob view;    // view.owner is this entry
  caf::actor handle;            // none until first placed (without faults), or while down
  int32_t reported_round = -1;  // the last round it reported for (2^31 rounds: 68 years of 1 s)
  bool done = false;            // finished or failed: recorded
  bool down = false;            // its actor died; not runnable until it is respawned
  LeaseHeld lease;              // with standing leases
  JobRecord record;
  double restart_at_s = -1;  // a crash fault will respawn it then (-1: none announced)
  std::string crash_fault;   // the fault that killed it
};
static_assert(sizeof(TrackedJob) <= 440, "a job's entry outgrows its 448-byte block");

struct SchedulerState {
  SchedulerOptions options;
  ClusterHandles cluster;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  const scheduling::PolicyDefinition* policy = nullptr;                   // options.policy's
  const scheduling::MechanismDefinition* mechanism_definition = nullptr;  // options.mechanism's
  std::unique_ptr<scheduling::Mechanism> mechanism;
  std::unique_ptr<scheduling::ClusterLedger> ledger;
  // Looked up by id, never iterated. One node a job: a flat table of ~400-byte slots, half of
  // them empty after it grows, and the old table beside the new while it grows, cost a deep queue
  // (a backlog of 10^5-10^6 waiting jobs) twice the jobs' own size.
  absl::node_hash_map<int64_t, TrackedJob> jobs;
  // Unfinished jobs in arrival order. Finished and failed jobs leave `jobs` (and the count
  // `queued`) when a round closes; their ids stay here until enough have gone to compact, so a
  // walk over the queue skips ids no longer in `jobs`.
  std::vector<int64_t> queue;
  int64_t queued = 0;
  std::vector<int64_t> done_in_queue;  // finished or failed since the last close
  // With a long queue (`indexed`): the runnable jobs in the policy's order, and the starvation
  // guard's watch, kept up to date from round to round: every change to a job they read touches
  // it (Touch), and the next round refiles the touched jobs before it reads the order. A short
  // queue is cheaper to sort each round, as it always was.
  bool indexed = false;
  bool head_fell_short = false;  // last round, the head of the order did not fill the GPUs
  size_t head_placed = 0;        // last round, the jobs placed from the head
  scheduling::QueueOrder order;
  scheduling::StarvationGuard starvation;
  std::vector<int64_t> touched;
  absl::flat_hash_set<int64_t> not_ready;  // profiles not ready yet: refiled every round
  std::vector<int64_t> placed_last_round;  // their expected speed-ups are reset next round
  // A model's sensitivity matrix as its arrivals carry it, shared by all of them that carry the
  // same one (Admit): one copy a model instead of one a waiting job.
  absl::flat_hash_map<std::string, std::shared_ptr<const SensitivityMatrix>> model_sensitivity;
  double next_arrival_s = 0;  // -1: the workload is exhausted
  // The round in flight.
  int64_t round = -1;
  RoundRecord current;
  std::vector<LeaseRecord> round_leases;  // with lease_log
  int32_t awaiting_reports = 0;
  std::vector<JobProgress> filed_reports;     // for the round's end, sent before it (in order)
  PartShapes placed_shapes, held_shapes;      // scratch: a placement's, sorted
  std::vector<TrackedJob*> placed_jobs;       // scratch: the round's placed jobs, in its order
  std::vector<RoundLeases> leases_by_server;  // scratch: the round's, per server
  // Scratch: the round's standing parts, in its order; listed to their servers once it is known
  // which servers hear of the round.
  struct StandingRef {
    int32_t server, placement, part;
  };
  std::vector<StandingRef> standing_parts;
  std::vector<scheduling::QueuedJob> head_jobs;  // scratch: the order's head
  // The round's standing leases by report key, and the last round's while it closes. A job's
  // node in `jobs` stays put until the round closes (EraseDoneJobs).
  struct StandingTurn {
    uint64_t report_key;
    TrackedJob* job;
  };
  std::vector<StandingTurn> round_standing, standing_closing;
  bool round_timer_fired = true;
  std::vector<int64_t> round_jobs;  // jobs leased this round
  // The round's placements, until the next round is planned: whose parts a lost server held.
  std::vector<scheduling::JobPlacement> round_placements;
  bool grace_pending = false;
  // Supervision. A job's actor goes in when first placed and out when the job ends: a million-job
  // run erases a million, which in a table of nodes cost a walk of linked nodes each.
  struct AddrHash {  // the standard one is the actor's id alone, which a flat table must mix
    size_t operator()(const caf::actor_addr& addr) const { return absl::HashOf(addr.id()); }
  };
  absl::flat_hash_map<caf::actor_addr, int64_t, AddrHash> job_of_actor;
  std::unordered_map<caf::actor_addr, int32_t> server_of_actor;
  std::vector<bool> server_up;
  std::vector<double> server_back_at_s;  // a down server restarts then; -1: never (lost for good)
  // Jobs admitted since the last round was planned, and what survived when the whole queue was
  // last asked whether the mechanism can ever place its jobs (FailJobsThatNoLongerFit).
  std::vector<int64_t> unchecked_arrivals;
  scheduling::SurvivingGpus fit_checked;
  // Measurement window.
  int64_t measured_arrived = 0;
  int64_t measured_ended = 0;  // finished or failed
  int64_t lease_refusals = 0;
  bool ended = false;
  static inline const char* name = "troupe.scheduler";
};

caf::behavior SchedulerActor(caf::stateful_actor<SchedulerState>* self, SchedulerOptions options,
                             ClusterHandles cluster, RunClock clock, Telemetry* telemetry);

}  // namespace troupe
