// Scheduling policies: the order in which queued jobs are offered GPUs each round.
//   FIFO  arrival time
//   SRTF  remaining time, shortest first
//   LAS   attained service (GPU-seconds), least first
//   FTF   finish-time fairness rho = (now - arrival + remaining) / ideal duration, largest first
//         (Themis, NSDI '20: the job treated least fairly goes first); FtfOrder::kSmallestFirst
//         sorts the other way, as Synergy's simulator does (ftf_synergy_new.py)
// Remaining time is the remaining iterations at the job's expected speed-up (SchedJob::
// expected_speedup, see ExpectedSpeedup), the ideal duration at the proportional share:
// both exactly as Synergy's simulator computes them (job.py remaining_duration, ideal_duration).
// Ties are broken by arrival time, then job id, so the order is total and deterministic.
// Starvation guard, Synergy's simulator's priority bump: a job that, when a round is planned, has
// waited longer than `starvation_s` since it last ran (or since it arrived) is marked
// (MarkStarving, after the round is ordered) and from then on goes ahead of every unmarked job,
// until it finishes; marked jobs keep the policy's order among themselves. 0 disables it.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "scheduling/mechanism.hpp"
#include "scheduling/placement.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

enum class Policy { kFifo, kSrtf, kLas, kFtf };

// Which end of finish-time fairness goes first.
enum class FtfOrder {
  kLargestFirst,   // the job treated least fairly (Themis; the default)
  kSmallestFirst,  // the job treated most fairly (Synergy's simulator)
};

struct OrderOptions {
  double starvation_s = 0;  // the starvation guard's bound (MarkStarving); 0: off
  FtfOrder ftf_order = FtfOrder::kLargestFirst;
};

std::string_view PolicyName(Policy policy);

// Sorts `jobs` into the policy's order at virtual time now_s.
// With `prefix` > 0 only the first `prefix` positions are guaranteed in order (the rest follow
// in no particular order): a round rarely reads past the jobs that fill the cluster, and a full
// sort of a long queue every round is what made SRTF runs slow.
void OrderJobs(Policy policy, double now_s, std::vector<const SchedJob*>& jobs,
               const OrderOptions& options = {}, size_t prefix = 0);

// The policy's primary sort key of `job` at now_s, smaller first (OrderJobs' order is then
// starving first, this key, arrival, id). Only FTF's depends on now_s.
double PolicyKey(Policy policy, FtfOrder ftf_order, double now_s, const SchedJob& job);
// FTF's key from the parts of the job it reads (remaining_s() and ideal_duration_s()).
double FtfKey(FtfOrder ftf_order, double now_s, double arrival_s, double remaining_s,
              double ideal_duration_s);

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
// round just planned (null: none), as Synergy's simulator reckons it when it sorts: 1 under
// GPU-proportional (which never gives a job more than its share); otherwise the speed-up of that
// placement — its speed-up at its ideal demand if it holds that demand, the estimated matrix at
// what it holds if not (TUNE's fallback to the share: 1) — and its speed-up at its ideal demand
// if it was not placed.
double ExpectedSpeedup(MechanismKind mechanism, const SchedJob& job, const JobPlacement* placement);

}  // namespace troupe::scheduling
