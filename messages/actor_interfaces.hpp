// The typed interfaces of the lease protocol's actors (cluster_messages.hpp): what each accepts
// and what it answers. A handle of one of these types sends only what its actor handles, and an
// actor's behaviour must handle exactly its interface: a wrong message is a compile error. Each
// actor's behaviour may handle more than its interface (its own timers, real compute's messages):
// those are in its own header, as an `extend` of the interface here, and its handle converts to
// the interface's.
//
// Handles of these types serialise like caf::actor (a typed handle is an actor handle with its
// interface checked at compile time), so the messages that carry them cross processes unchanged.
// The message types are only declared here: the handles are members of the messages themselves.
#pragma once

#include <caf/atom.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

namespace troupe {

// cluster_messages.hpp
struct RoundLeases;
struct LeaseGrant;
struct LeaseRefusal;
struct LeaseResize;
struct LeaseRelease;
struct ServerFree;
struct ProgressQuery;
struct LeaseLost;
struct JobProgress;
struct ArrivalsRequest;
struct ArrivalBatch;
// fault_messages.hpp
struct FaultNotice;
struct ServerNotice;
struct ServerUp;
struct JobRespawned;
struct SlowDown;
struct CrashJob;
struct JobsCrashed;
struct RespawnJob;
struct JobFailed;
struct RecoverRequest;
struct RecoveredJobs;
// work_messages.hpp
struct PartWork;
// actors/agent/agent_messages.hpp
struct AgentsExpected;
struct AgentArrival;
struct JobScheduler;

// A server (actors/server_actor.hpp): a round's leases (from the scheduler, which it answers
// only with LeaseRefusal), a straggler fault, the work of a real-compute part, and requests to
// resize or release a lease or to say what it has free.
using server_actor =
    caf::typed_actor<caf::reacts_to<RoundLeases>, caf::reacts_to<SlowDown>,
                     caf::reacts_to<PartWork>, caf::replies_to<LeaseResize>::with<ServerFree>,
                     caf::replies_to<LeaseRelease>::with<ServerFree>,
                     caf::replies_to<caf::get_atom>::with<ServerFree>>;

// A job (actors/job_actor.hpp, actors/agent/agent_job_proxy.hpp): a part of its lease, the
// scheduler's query for a missing report, the loss of a lease, and whom to report to.
using job_actor = caf::typed_actor<caf::reacts_to<LeaseGrant>, caf::reacts_to<ProgressQuery>,
                                   caf::reacts_to<LeaseLost>, caf::reacts_to<JobScheduler>>;

// The workload (actors/workload_actor.hpp): the arrivals up to a time (with the next arrival's
// time), the next arrival's time alone, agents' jobs, a restarted scheduler's recovery, and the
// fault injector's and scheduler's word on jobs that crash, restart or fail.
using workload_actor =
    caf::typed_actor<caf::replies_to<ArrivalsRequest>::with<ArrivalBatch>,
                     caf::replies_to<caf::get_atom>::with<double>, caf::reacts_to<AgentsExpected>,
                     caf::reacts_to<AgentArrival>,
                     caf::replies_to<RecoverRequest>::with<RecoveredJobs>,
                     caf::reacts_to<JobFailed>, caf::replies_to<CrashJob>::with<JobsCrashed>,
                     caf::reacts_to<RespawnJob>>;

// The scheduler (actors/scheduler_actor.hpp): jobs' reports, servers' refusals, and the fault
// injector's and workload's word on what crashed and what came back.
using scheduler_actor = caf::typed_actor<caf::reacts_to<JobProgress>, caf::reacts_to<LeaseRefusal>,
                                         caf::reacts_to<FaultNotice>, caf::reacts_to<ServerNotice>,
                                         caf::reacts_to<ServerUp>, caf::reacts_to<JobRespawned>>;

}  // namespace troupe
