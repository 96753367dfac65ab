// What a lease credits a job: the job actor's accounting (actors/job_actor.cpp), apart from its
// messages. RunLease commits an assembled lease's work to the job's account — Synergy's
// iterations for the round's length at the share's speed-up, or what real compute measured — and
// builds the report; CreditStoodRounds commits the rounds a standing lease stood
// (messages/cluster_messages.hpp) at the rate the last report offered, to the same figures. Both
// count iterations as the scheduler's books count them (scheduling/lease_credit.hpp).
#pragma once

#include <cstdint>

#include "actors/job_actor.hpp"

namespace troupe {

// The lease is complete, refused by none, and its granted GPUs are all the job's.
bool Runnable(const JobActorState& st);
// A report of the lease that started at lease_start_s, with nothing run yet.
JobProgress ReportOf(const JobActorState& st, int64_t round, double lease_start_s);
// Runs the assembled lease to its end and commits its work; sets the job's standing offer.
JobProgress RunLease(JobActorState& st);
// Credits `rounds` rounds stood since the last report at the rate it offered (under
// faults.recovery round by round from the checkpoint cadence, as the scheduler credited them).
void CreditStoodRounds(JobActorState& st, int32_t rounds);
// With offers_standing: the report `p` of a lease that ran on all of the job's GPUs offers to
// keep it (JobProgress.standing_iterations, standing_cadence); the job keeps the lease's parts.
void OfferToStand(JobActorState& st, JobProgress* p);

// faults.recovery (checkpoint_cadence.hpp). A failure `held_s` into the running lease: what its
// checkpoints saved is kept, the training since the last one is lost, the job rolls back to it
// and owes a restart; `p` says so (JobProgress.rolled_back). It counts as an interruption when
// `interrupted` (OnLeaseLost says when).
void LoseSinceCheckpoint(JobActorState& st, double held_s, bool interrupted, JobProgress* p);
// A job respawned from the store's copy of its account after its actor died: the training
// since its last checkpoint before the lease it died in is lost (that lease the scheduler counts
// as wasted, as without recovery), and it owes a restart.
void ResumeFromCheckpoint(JobActorState& st);
// The costs since the last report go into `p` (and no longer count as unreported).
void TakeUnreported(JobActorState& st, JobProgress* p);

}  // namespace troupe
