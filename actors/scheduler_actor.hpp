// The scheduler actor: round-based, as Synergy is. What it decides, the round engine decides
// (scheduling/cluster_scheduler.hpp: the queue, the ledger, the jobs' books); the actor turns
// messages into the engine's events and the engine's decisions into messages, and reads the clock.
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
#include <absl/hash/hash.h>

#include <caf/actor_addr.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <memory>
#include <unordered_map>
#include <vector>

#include "actors/job_spawner.hpp"
#include "messages/actor_interfaces.hpp"
#include "messages/atoms.hpp"
#include "messages/cluster_messages.hpp"
#include "messages/fault_messages.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"
#include "scheduling/cluster_scheduler.hpp"

namespace troupe {

// Each model's speed on every GPU type of the run, by type index (SchedJob::type_speed).
using TypeSpeedsByModel = scheduling::TypeSpeedsByModel;
// The round engine's options (scheduling/cluster_scheduler.hpp).
using SchedulerOptions = scheduling::ClusterSchedulerOptions;

struct ClusterHandles {
  std::vector<ServerSpec> specs;
  std::vector<server_actor> servers;  // same order as specs
  workload_actor workload;
  caf::actor metrics;
  caf::actor profiler;     // none with oracle profiling: the workload's matrices are the truth
  caf::actor checkpoints;  // with faults: the checkpoint store
  caf::actor injector;     // with faults: the fault injector
  // Spawns the actor of a job that arrived without one (a run without faults) when it is first
  // placed: until then a waiting job is the engine's entry alone.
  JobSpawner jobs;
};

// The actor's state: the engine, which decides, and what it takes to carry its decisions out as
// messages (scheduler_internal.hpp): the cluster's actors and each job's.
struct SchedulerState {
  std::unique_ptr<scheduling::SchedulerOutput> messenger;  // the engine's decisions as messages
  std::unique_ptr<scheduling::ClusterScheduler> engine;
  ClusterHandles cluster;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  double round_s = 0;  // the engine's: the requests' retry period
  // The actor of each job that has one, until it ends or dies. A job gets its actor when first
  // placed (without faults), so this holds about one job a GPU, not the queue.
  absl::flat_hash_map<int64_t, job_actor> job_actors;
  // Supervision. A job's actor goes in when first placed and out when the job ends: a million-job
  // run erases a million, which in a table of nodes cost a walk of linked nodes each.
  struct AddrHash {  // the standard one is the actor's id alone, which a flat table must mix
    size_t operator()(const caf::actor_addr& addr) const { return absl::HashOf(addr.id()); }
  };
  absl::flat_hash_map<caf::actor_addr, int64_t, AddrHash> job_of_actor;
  std::unordered_map<caf::actor_addr, int32_t> server_of_actor;
  // The injector's last notice of each server it crashed: why, and when it comes back.
  absl::flat_hash_map<int32_t, ServerNotice> server_notices;
  // The jobs failures interrupted at jobs_hit_at_s, the instant of the last server that went down.
  double jobs_hit_at_s = -1;
  absl::flat_hash_set<int64_t> jobs_hit_now;
  int64_t lease_refusals = 0;
  static inline const char* name = "troupe.scheduler";
};

// What the scheduler's actor handles: its interface (scheduler_actor,
// messages/actor_interfaces.hpp), its round and grace timers, and its own requests' timer (Ask).
using scheduler_actor_impl =
    scheduler_actor::extend<caf::reacts_to<ask_later_atom>,
                            caf::reacts_to<round_end_atom, int64_t, double>,
                            caf::reacts_to<grace_atom, int64_t>>;

scheduler_actor_impl::behavior_type SchedulerActor(
    scheduler_actor_impl::stateful_pointer<SchedulerState> self, SchedulerOptions options,
    ClusterHandles cluster, RunClock clock, Telemetry* telemetry);

}  // namespace troupe
