// The workload actor: the source of jobs (a trace or Synergy's generator) as an actor. Asked for
// the arrivals up to a virtual time, it answers with them and the time of the next arrival. In runs
// with faults it spawns each arrival's job actor; without, the scheduler spawns it when it first
// places the job (job_spawner.hpp), so that a waiting job is no actor. The scheduler pulls at the
// start of each round, so arrivals reach it in the same order in emulated and real mode, whatever
// the wall clock does.
//
// In runs with faults it is also the jobs' supervisor: it keeps every job it released (a restarted
// scheduler asks for them: RecoverRequest), kills a job a `crash` fault hits (CrashJob) and
// respawns it from its last checkpoint (RespawnJob), telling the scheduler its new handle.
#pragma once

#include <absl/container/btree_map.h>
#include <absl/container/btree_set.h>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <memory>

#include "actors/agent/injected_arrivals.hpp"
#include "actors/compute_worker_actor.hpp"
#include "actors/job_spawner.hpp"
#include "messages/actor_interfaces.hpp"
#include "messages/atoms.hpp"
#include "messages/cluster_messages.hpp"
#include "runtime/actor_context.hpp"
#include "workload/job_source.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {

struct WorkloadState {
  std::shared_ptr<JobSource> source;  // owned by this actor alone once the run starts
  std::shared_ptr<const ModelCatalog> catalog;
  ActorContext ctx;
  scheduler_actor scheduler;  // the latest to ask for arrivals
  caf::actor checkpoints;     // the checkpoint store; none without faults
  JobSpawner jobs;            // spawns the jobs' actors (with faults: on arrival and on respawn)
  // With faults: every job released, by id, with its live actor (none once a crash killed it).
  absl::btree_map<int64_t, ArrivedJob> released;
  absl::btree_set<int64_t> dead_for_good;  // crashed without a restart
  absl::btree_set<int64_t> failed;         // recorded failed by a scheduler (JobFailed)
  absl::btree_set<int64_t> agent_jobs;     // released jobs whose agent runs outside troupe
  InjectedArrivals agents;  // jobs of registered agents (RunConfig.agents, actors/agent/)
  static inline const char* name = "troupe.workload";
};

// `checkpoints`: the checkpoint store in runs with faults (jobs checkpoint to it; the workload
// keeps its registry), else none. `jobs`: how the jobs' actors are made (job_spawner.hpp).
// What the workload's actor handles: its interface (workload_actor,
// messages/actor_interfaces.hpp) and the timer of its own requests (Ask).
using workload_actor_impl = workload_actor::extend<caf::reacts_to<ask_later_atom>>;

workload_actor_impl::behavior_type WorkloadActor(
    workload_actor_impl::stateful_pointer<WorkloadState> self, std::shared_ptr<JobSource> source,
    std::shared_ptr<const ModelCatalog> catalog, ActorContext ctx, caf::actor checkpoints,
    JobSpawner jobs);

}  // namespace troupe
