// The job actor's parts (actors/job_actor.cpp) that its lease-loss handling
// (actors/job_lease_loss.cpp) shares with it: how it reports a lease, and what a loss does.
#pragma once

#include <cstdint>

#include "actors/job_actor.hpp"

namespace troupe::job_detail {

using JobSelf = emulated_job_actor::stateful_pointer<JobActorState>;

// A new lease started: what the job ran of the previous one goes (its worker is stopped by the
// caller).
void ResetRun(JobLease& lease);
// Where reports go: the scheduler that ordered the lease, or the job's own if none said.
const scheduler_actor& ReportTo(const JobActorState& st);
// Stops the compute workers whose answers are no longer wanted.
void StopWorkers(JobSelf self, JobLease& lease);
// Ends the lease in flight with `progress`, its report (and checkpoints the job's account).
void Report(JobSelf self, JobProgress progress);
// No grant of the lease starting at lease_start_s ever came: it never ran, and the report says so.
void ReportLeaseNeverGranted(JobSelf self, int64_t round, double lease_start_s);

// Lost leases (job_lease_loss.cpp).
// The job held its GPUs `held_s` more in the trace's attempt it is in (workload.
// replay_job_failures); an attempt that `ended` (crashed) starts the next.
void NoteAttemptHeld(JobActorState& st, double held_s, bool ended);
// The trace's attempt the job is in ends within the lease [start_s, end_s): the job loses the
// lease then (LeaseLost from itself, server kAttemptEnded), as its own process would crash.
void ArmAttemptEnd(JobSelf self, double start_s, double end_s);
// The scheduler's LeaseLost: the lease is cut at the failure's instant and what it held is lost.
void OnLeaseLost(JobSelf self, const LeaseLost& lost);
// Before a grant is taken: a relet that replaces the lease in flight before its loss came cuts it.
void CutLeaseReplacedBy(JobSelf self, const LeaseGrant& grant);

}  // namespace troupe::job_detail
