// A job's lost leases (job_actor_internal.hpp): a server's failure told by the scheduler
// (LeaseLost), a relet that comes before that loss, and the end of a trace's failed attempt. A
// lost lease is cut at the failure's instant: the GPU time it held until then is lost (under
// faults.recovery, everything since the last checkpoint), and the job reports it.
#include <algorithm>

#include "actors/job_actor_internal.hpp"
#include "actors/job_lease_account.hpp"
#include "runtime/counted_send.hpp"

namespace troupe::job_detail {

// The job held its GPUs `held_s` more in the trace's attempt it is in; an attempt that ended
// (crashed) starts the next.
void NoteAttemptHeld(JobActorState& st, double held_s, bool ended) {
  if (st.attempt >= st.spec.crashed_attempts_s.size()) return;
  st.attempt_held_s += held_s;
  if (ended) {
    ++st.attempt;
    st.attempt_held_s = 0;
  }
}

// workload.replay_job_failures: the trace's attempt the job is in ends within the lease
// [start_s, end_s): the job crashes then, as its own process would, losing what a crash loses.
void ArmAttemptEnd(JobSelf self, double start_s, double end_s) {
  JobActorState& st = self->state;
  if (st.attempt >= st.spec.crashed_attempts_s.size() || !Runnable(st)) return;
  const double left_s = st.spec.crashed_attempts_s[st.attempt] - st.attempt_held_s;
  const double crash_s = start_s + std::max(0.0, left_s);
  if (crash_s >= end_s) return;
  TellAt(self, st.ctx, self, crash_s,
         LeaseLost{.round = st.lease.assembly.round(),
                   .lease_start_s = start_s,
                   .server = kAttemptEnded,
                   .at_s = crash_s});
}

namespace {

// When the loss cut the lease: the failure's instant it carries, else now.
double CutInstant(JobSelf self, const LeaseLost& lost) {
  return lost.at_s >= 0 ? lost.at_s : self->state.ctx.clock.Now(self);
}

// The loss of a lease no grant of which reached the job (LeaseLost.rounds_stood): the rounds its
// last lease stood since then are credited first, as the grant would have had them credited. A
// lease that stood into this round runs in it again, on its parts, from the round's start — the
// lease that the loss then cuts as any other; cut at that start, it never ran (a server dead
// when the round began grants nothing).
void CreditBeforeLoss(JobSelf self, const LeaseLost& lost) {
  JobActorState& st = self->state;
  LeaseAssembly& lease = st.lease.assembly;
  if (lost.lease_start_s <= lease.start_s() || st.offer.iterations < 0) return;
  CreditStoodRounds(st, lost.rounds_stood);
  if (lost.stood && CutInstant(self, lost) > lost.lease_start_s) {
    lease.Restand(lost.round, lost.lease_start_s, lost.lease_start_s + st.offer.lease_s,
                  std::move(st.offer.parts));
  }
  st.offer.iterations = -1;
}

// The lease in flight was cut at cut_s (a server lost, or the trace's attempt ended): the GPU
// time it held since its start is lost, and the report says so.
void ReportLeaseCut(JobSelf self, double cut_s, bool attempt_ended) {
  JobActorState& st = self->state;
  const LeaseAssembly& lease = st.lease.assembly;
  JobProgress p = ReportOf(st, lease.round(), lease.start_s());
  if (Runnable(st)) {
    const double held_s = std::clamp(cut_s - lease.start_s(), 0.0, lease.end_s() - lease.start_s());
    NoteAttemptHeld(st, held_s, attempt_ended);
    if (st.recovery) {  // everything since the last checkpoint is lost, not only this lease
      // A server's failure interrupts the job only within the lease, as the failure's record
      // counts it (interruptions.csv): not at its first instant, when a second server lost at
      // the failure's instant cuts the lease relet at it (docs/faults.md "Recovery").
      const bool interrupted = attempt_ended || (cut_s > lease.start_s() && cut_s < lease.end_s());
      LoseSinceCheckpoint(st, held_s, interrupted, &p);
    } else {
      p.wasted_gpu_s = st.spec.gpus * held_s;
      st.account.wasted_gpu_s += p.wasted_gpu_s;
    }
  }
  Report(self, std::move(p));
}

}  // namespace

void OnLeaseLost(JobSelf self, const LeaseLost& lost) {
  JobActorState& st = self->state;
  if (lost.rounds_stood > 0 || lost.stood) CreditBeforeLoss(self, lost);
  const LeaseAssembly& lease = st.lease.assembly;
  if (lost.lease_start_s > lease.start_s())
    return ReportLeaseNeverGranted(self, lost.round, lost.lease_start_s);
  if (lost.lease_start_s != lease.start_s() || lease.ended()) return;
  ReportLeaseCut(self, CutInstant(self, lost), lost.server == kAttemptEnded);
}

// A grant of a lease that starts within the one in flight is a relet (a spare, or smaller) after
// a failure cut that one; the scheduler sends the loss first, but a late message (a `delay`
// fault) may bring it after: the lease in flight is cut at the relet's start, as the loss would
// have cut it, and the loss, when it comes, finds it over.
void CutLeaseReplacedBy(JobSelf self, const LeaseGrant& grant) {
  const LeaseAssembly& lease = self->state.lease.assembly;
  if (lease.ended() || !lease.complete() || grant.start_s <= lease.start_s() ||
      grant.start_s >= lease.end_s()) {
    return;
  }
  ReportLeaseCut(self, grant.start_s, false);
}
}  // namespace troupe::job_detail
