// Scheduling policies: the order in which queued jobs are offered GPUs each round.
//
// A policy is a key: each job's primary sort key, smaller first (PolicyDefinition::key). The
// order is then: starving jobs first (unless the policy leaves the mark unread, as FIFO does),
// the key, arrival time, job id — total and deterministic.
// Policies register themselves by name (policy_registry.hpp); troupe's own (fifo, srtf, las,
// ftf, in scheduling/policies/) are registered the same way a user's is.
//
// Remaining time is the remaining iterations at the job's expected speed-up (SchedJob::
// expected_speedup, see ExpectedSpeedup), the ideal duration at the proportional share:
// both exactly as Synergy's simulator computes them (job.py remaining_duration, ideal_duration).
// Starvation guard, Synergy's simulator's priority bump: a job that, when a round is planned, has
// waited longer than `starvation_s` since it last ran (or since it arrived) is marked
// (MarkStarving, after the round is ordered) and from then on goes ahead of every unmarked job,
// until it finishes; marked jobs keep the policy's order among themselves. 0 disables it. A
// policy may leave the mark unread (PolicyDefinition::starving_first): FIFO does, as Synergy's
// simulator's FIFO sorts by arrival alone; the scheduler then runs without the guard.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "scheduling/mechanism.hpp"
#include "scheduling/placement.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

// Which end of finish-time fairness goes first (the ftf policy).
enum class FtfOrder {
  kLargestFirst,   // the job treated least fairly (Themis; the default)
  kSmallestFirst,  // the job treated most fairly (Synergy's simulator)
};

struct OrderOptions {
  double starvation_s = 0;  // the starvation guard's bound (MarkStarving); 0: off
  FtfOrder ftf_order = FtfOrder::kLargestFirst;
};

// What a clock-reading key reads of a job, taken when the job is filed (PolicyDefinition::
// clock_terms): a few numbers in place of a copy of the job.
struct ClockTerms {
  double a = 0;
  double b = 0;
  double c = 0;
};

// A policy, as it registers itself (policy_registry.hpp).
struct PolicyDefinition {
  std::string_view name = {};     // what a config selects it by, e.g. "las"
  std::string_view summary = {};  // one line for `troupe list`
  // The job's primary sort key at virtual time now_s, smaller first. Must be a pure function of
  // its arguments: the queue may compute it long before the round that reads it (see below).
  double (*key)(const SchedJob& job, double now_s, const OrderOptions& options) = nullptr;
  // Whether `key` reads now_s. A long queue keeps a key that does not in a B-tree from round to
  // round (a job is refiled only when something about it changes); one that does is computed
  // anew for every queued job each round.
  bool key_reads_clock = false;
  // Optional, for a key that reads the clock: the key in two steps, so that a long queue keeps
  // three numbers a job rather than a copy of it. clock_terms takes what the key reads of the
  // job, clock_key the key at now_s from those alone; clock_key(clock_terms(job, o), now_s, o)
  // must equal key(job, now_s, o) bit for bit. Without them the queue keeps a copy of each job.
  ClockTerms (*clock_terms)(const SchedJob& job, const OrderOptions& options) = nullptr;
  double (*clock_key)(const ClockTerms& terms, double now_s, const OrderOptions& options) = nullptr;
  // Whether `key` reads expected_speedup (remaining_s() does): the scheduler then refreshes the
  // expected speed-up of the jobs placed this round and last round (ExpectedSpeedup).
  bool key_reads_expected_speedup = false;
  // The key is the same for every job, so a queue already in arrival order is in the policy's
  // order (FIFO): ordering it is skipped. Only a shortcut; the order is the same either way.
  bool constant_key = false;
  // Whether jobs the starvation guard marked go ahead of the rest. Synergy's simulator sorts its
  // SRTF, LAS and FTF queues by the mark first and its FIFO queue by arrival alone
  // (schedulers/*_synergy_new.py, `schedule`). When false, the order ignores the mark and the
  // scheduler runs without the guard, whatever `starvation_s` says.
  bool starving_first = true;
};

// Sorts `jobs` into the policy's order at virtual time now_s.
// With `prefix` > 0 only the first `prefix` positions are guaranteed in order (the rest follow
// in no particular order): a round rarely reads past the jobs that fill the cluster, and a full
// sort of a long queue every round is what made SRTF runs slow.
void OrderJobs(const PolicyDefinition& policy, double now_s, std::vector<const SchedJob*>& jobs,
               const OrderOptions& options = {}, size_t prefix = 0);

// Since when `job` has waited: the end of the last round it ran in, or its arrival.
double WaitingSince(const SchedJob& job);
// The starvation guard's test: at now_s, a job waiting since waiting_since_s has waited longer
// than starvation_s. For a fixed now_s it holds for every waiting start up to some point and for
// none after (floating-point subtraction is monotone), which StarvationGuard relies on.
bool WaitedTooLong(double now_s, double starvation_s, double waiting_since_s);

// Marks `job` as starving (SchedJob::starving, for good) if at now_s it has waited longer than
// starvation_s (> 0) since it last ran or arrived. The scheduler calls it for every job it
// ordered, once the round is planned: the mark counts from the next round's order on.
void MarkStarving(double now_s, double starvation_s, SchedJob& job);

// The speed-up `job` is expected to run at in the next round, given the placement it got in the
// round just planned (null: none), as Synergy's simulator reckons it when it sorts: 1 under a
// mechanism that never gives a job more than its GPU-proportional share (`share_only`,
// MechanismDefinition::proportional_share_only); otherwise the speed-up of that placement — its
// speed-up at its ideal demand if it holds that demand, the estimated matrix at what it holds if
// not (TUNE's fallback to the share: 1) — and its speed-up at its ideal demand if it was not
// placed.
double ExpectedSpeedup(bool share_only, const SchedJob& job, const JobPlacement* placement);

}  // namespace troupe::scheduling
