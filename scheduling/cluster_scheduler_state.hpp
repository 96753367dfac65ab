// The round engine's state (cluster_scheduler.hpp), shared by its source files:
// cluster_scheduler.cpp (rounds), cluster_scheduler_arrivals.cpp (admitting jobs),
// cluster_scheduler_queue.cpp (the order between rounds), cluster_scheduler_leases.cpp and
// cluster_scheduler_standing.cpp (a round's leases, standing leases), cluster_scheduler_faults.cpp
// (faults and recovery). Not an interface of its own.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>
#include <absl/container/node_hash_map.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "messages/job_progress.hpp"
#include "messages/lease_span.hpp"
#include "messages/records.hpp"
#include "scheduling/cluster_ledger.hpp"
#include "scheduling/cluster_scheduler.hpp"
#include "scheduling/mechanism_registry.hpp"
#include "scheduling/policy_registry.hpp"
#include "scheduling/queue_order.hpp"
#include "scheduling/starvation_guard.hpp"

namespace troupe::scheduling {

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

// A job's last lease, for standing leases (ClusterSchedulerOptions.standing_leases). Its shapes
// (what the job's progress reads) are its parts' (PartShapes): kept as parts alone, it fills one
// cache line.
struct LeaseHeld {
  static constexpr uint64_t kNever = UINT64_MAX;  // report_key of a job never leased

  PlacementParts parts;             // the last round's, where they were (servers hold them)
  int64_t offered_iterations = -1;  // a further round's iterations (-1: no offer)
  double lease_s = 0;               // the length of the round offered for
  uint64_t report_key = kNever;     // this round: where its report falls among the round's
  int32_t offer_round = -1;         // the round whose report offered to keep it
  // Since its last grant: the next grant tells the job; -k: its grant of this round told k.
  int32_t rounds_stood = 0;

  // Leased at least once (and not done: it leaves with the job).
  bool held() const { return report_key != kNever; }
};
static_assert(sizeof(LeaseHeld) == 64, "a job's last lease fills one cache line");

// A job the engine knows of. Every running job's entry is read several times a round, so it is
// kept to 440 bytes: with the table's key, one 448-byte block of seven cache lines. Its fields
// are in the order a round reads them, so that a round reads three of those lines, each once: the
// first holds the key and what a round leaves alone (ready_at_s, then SchedJob's first fields);
// the second what a placement reads of the view (a long queue's rounds read the order's copy of
// it instead, QueuedJob, and leave this line alone too); the third and fourth what the round's
// lease reads and writes (the view's progress, whether it has an actor, the last lease, the
// record's first fields).
struct TrackedJob {
  double ready_at_s = 0;        // its profile is ready then; it may run from the next round start
  SchedJob view;                // view.owner is this entry
  bool has_actor = false;       // none until first placed (without faults), or while down
  int32_t reported_round = -1;  // the last round it reported for (2^31 rounds: 68 years of 1 s)
  bool done = false;            // finished or failed: recorded
  bool down = false;            // its actor died; not runnable until it is respawned
  LeaseHeld lease;              // with standing leases
  JobRecord record;
  double restart_at_s = -1;  // a crash fault will respawn it then (-1: none announced)
  std::string crash_fault;   // the fault that killed it
};
static_assert(sizeof(TrackedJob) <= 440, "a job's entry outgrows its 448-byte block");

struct EngineState {
  // As given, but for order.starvation_s: 0 under a policy that leaves the guard's mark unread.
  ClusterSchedulerOptions options;
  ClusterSetup setup;
  SchedulerOutput* out = nullptr;
  const PolicyDefinition* policy = nullptr;                   // options.policy's
  const MechanismDefinition* mechanism_definition = nullptr;  // options.mechanism's
  std::unique_ptr<Mechanism> mechanism;
  std::unique_ptr<ClusterLedger> ledger;
  std::unique_ptr<FabricRound> fabric;                    // with ClusterSetup.fabric
  const std::vector<JobNetworkRound>* network = nullptr;  // the round's, by placement
  // Looked up by id, never iterated. One node a job: a flat table of ~400-byte slots, half of
  // them empty after it grows, and the old table beside the new while it grows, cost a deep queue
  // (a backlog of 10^5-10^6 waiting jobs) twice the jobs' own size.
  absl::node_hash_map<int64_t, TrackedJob> jobs;
  // options.recovery: each job's recovery costs so far (kept apart: a job's entry is full).
  absl::flat_hash_map<int64_t, JobRecovery> recovery;
  // workload.replay_job_failures: the jobs the trace records as failed, and how; each fails where
  // it would finish (kept apart too; empty otherwise).
  absl::flat_hash_map<int64_t, TraceEnd> trace_ends;
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
  QueueOrder order;
  StarvationGuard starvation;
  std::vector<int64_t> touched;
  absl::flat_hash_set<int64_t> not_ready;  // profiles not ready yet: refiled every round
  std::vector<int64_t> placed_last_round;  // their expected speed-ups are reset next round
  // A model's sensitivity matrix as its arrivals carry it, shared by all of them that carry the
  // same one (Admit): one copy a model instead of one a waiting job.
  absl::flat_hash_map<std::string, std::shared_ptr<const SensitivityMatrix>> model_sensitivity;
  double next_arrival_s = 0;  // -1: the workload is exhausted
  // The round in flight, and the start of the last round planned (or slept through: Idle).
  int64_t round = -1;
  double planned_start_s = -1;
  double deferred_start_s = -1;  // a plan put off to the end of its instant (a repair due then)
  RoundRecord current;
  std::vector<LeaseRecord> round_leases;  // with lease_log
  int32_t awaiting_reports = 0;
  std::vector<JobProgress> filed_reports;     // for the round's end, sent before it (in order)
  PartShapes placed_shapes, held_shapes;      // scratch: a placement's, sorted
  std::vector<TrackedJob*> placed_jobs;       // scratch: the round's placed jobs, in its order
  std::vector<ServerRound> leases_by_server;  // scratch: the round's, per server
  // Scratch: the round's standing parts, in its order; listed to their servers once it is known
  // which servers hear of the round.
  struct StandingRef {
    int32_t server, placement, part;
  };
  std::vector<StandingRef> standing_parts;
  std::vector<QueuedJob> head_jobs;  // scratch: the order's head
  // The round's standing leases by report key, and the last round's while it closes. A job's
  // node in `jobs` stays put until the round closes (EraseDoneJobs).
  struct StandingTurn {
    uint64_t report_key;
    TrackedJob* job;
  };
  std::vector<StandingTurn> round_standing, standing_closing;
  // Under faults (options.report_grace_s > 0) the granted leases' reports arrive after the
  // round's timer, one by one: the closing round's standing reports from standing_next on are
  // taken among them, each where its job would have sent it (TakeAmongStanding).
  size_t standing_next = 0;
  // options.recovery: each offering job's books (JobProgress.standing_cadence), from which a
  // round its lease stands is credited as the job credits it (CreditStoodRound). Kept apart.
  struct StandingBooks {
    CheckpointCosts costs;
    CheckpointCadence cadence;
    double iteration_s = 0;
  };
  absl::flat_hash_map<int64_t, StandingBooks> standing_books;
  bool round_timer_fired = true;
  std::vector<int64_t> round_jobs;  // jobs leased this round
  // The round's placements, until the next round is planned: whose parts a lost server held.
  std::vector<JobPlacement> round_placements;
  bool grace_pending = false;
  std::vector<bool> server_up;
  std::vector<double> server_back_at_s;  // a down server restarts then; -1: never (lost for good)
  // options.spare_servers: the servers in the spare pool, held out of placement; and the jobs
  // relet on a spare this round: the relet lease's start, and the starts of the lost leases
  // whose reports were taken since (cluster_scheduler_spares.cpp).
  std::vector<bool> spare;
  struct Relet {
    double start_s = 0;
    double at_s = -1;  // the failure it follows (a smaller relet lost at it starts just after)
    absl::InlinedVector<double, 2> taken;
  };
  absl::flat_hash_map<int64_t, Relet> relets;
  // The spare that took a failed server's place, and when: every job that server held moves to
  // that one spare, so the pool keeps spare_servers servers.
  struct Replacement {
    double at_s = -1;
    int32_t spare = -1;
  };
  absl::flat_hash_map<int32_t, Replacement> replaced;
  // options.continue_smaller_fraction: the jobs running smaller, on the parts they kept.
  absl::flat_hash_map<int64_t, PlacementParts> shrunk;
  // Jobs admitted since the last round was planned, and what survived when the whole queue was
  // last asked whether the mechanism can ever place its jobs (FailJobsThatNoLongerFit).
  std::vector<int64_t> unchecked_arrivals;
  SurvivingGpus fit_checked;
  // Measurement window.
  int64_t measured_arrived = 0;
  int64_t measured_ended = 0;  // finished or failed
  bool ended = false;
};

}  // namespace troupe::scheduling
