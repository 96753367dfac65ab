// The scheduler actor's pieces, shared by its source files: scheduler_actor.cpp (its behaviour
// and the requests that start a round), scheduler_messenger.cpp (the engine's decisions as
// messages), scheduler_arrivals.cpp (arrivals handed to the engine), scheduler_faults.cpp
// (supervision) and scheduler_recovery.cpp (a restarted scheduler). The decisions are the
// engine's (scheduling/cluster_scheduler.hpp). Not an interface of its own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/scheduler_actor.hpp"
#include "messages/fault_messages.hpp"
#include "messages/profiling_messages.hpp"
#include "runtime/counted_send.hpp"

namespace troupe::scheduler_detail {

using Self = scheduler_actor_impl::stateful_base<SchedulerState>;

inline constexpr int64_t kWakeUp = -1;  // a round timer that starts a round instead of ending one
inline constexpr int64_t kPlanDeferred = -2;  // a round timer that plans a round put off

// The engine's decisions as this actor's messages.
std::unique_ptr<scheduling::SchedulerOutput> MakeMessenger(Self* self);

// Starts the round at start_s: pulls arrivals (and profiles) when the engine asks for them, then
// has it plan.
void BeginRound(Self* self, double start_s);

// The arrivals as the engine takes them: each job's actor, if it came with one, kept and watched.
std::vector<scheduling::Arrival> TakeArrivals(Self* self, std::vector<ArrivedJob>& arrived);

// The scheduler's requests (Ask) are asked again every round while the network drops them; when
// `who` stays unreachable the run ends with that reason rather than waiting for ever.
AskRetry RetryEveryRound(const SchedulerState& st);
void Unreachable(Self* self, const std::string& who);

// Keeps a job's actor and monitors it, so that its death arrives as a down message.
void WatchJob(Self* self, int64_t job_id, job_actor handle);
// Forgets a job's actor (it ended or died): no longer monitored; returns it (null: none).
job_actor ForgetJob(Self* self, int64_t job_id);

// Supervision (scheduler_faults.cpp).
// A checkpoint as the engine resumes a job from it.
scheduling::ResumePoint ResumePointOf(const JobCheckpoint& checkpoint);
void WatchServers(Self* self);
void OnDown(Self* self, const caf::down_msg& down);
void OnFaultNotice(Self* self, const FaultNotice& notice);
void OnJobRespawned(Self* self, JobRespawned& respawned);
void OnServerNotice(Self* self, const ServerNotice& notice);
void OnServerUp(Self* self, ServerUp& up);
// A restarted scheduler: rebuild from the workload and the checkpoint store, then resume.
void Recover(Self* self);

}  // namespace troupe::scheduler_detail
