// Scheduling policies: the order in which queued jobs are offered GPUs each round.
//   FIFO  arrival time
//   SRTF  remaining time at the proportional share, shortest first
//   LAS   attained service (GPU-seconds), least first
//   FTF   finish-time fairness rho = (now - arrival + remaining) / ideal duration, largest first
// Ties are broken by arrival time, then job id, so the order is total and deterministic.
// Starvation guard (Synergy's simulator does the same): a job that has waited longer than
// `starvation_s` since it last ran (or since it arrived) goes ahead of every job that has not,
// in the policy's order among themselves. 0 disables it.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

enum class Policy { kFifo, kSrtf, kLas, kFtf };

std::string_view PolicyName(Policy policy);

// Sorts `jobs` into the policy's order at virtual time now_s.
// With `prefix` > 0 only the first `prefix` positions are guaranteed in order (the rest follow
// in no particular order): a round rarely reads past the jobs that fill the cluster, and a full
// sort of a long queue every round is what made SRTF runs slow.
void OrderJobs(Policy policy, double now_s, std::vector<const SchedJob*>& jobs,
               double starvation_s = 0, size_t prefix = 0);

}  // namespace troupe::scheduling
