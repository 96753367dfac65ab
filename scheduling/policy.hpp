// Scheduling policies: the order in which queued jobs are offered GPUs each round.
//   FIFO  arrival time
//   SRTF  remaining time at the proportional share, shortest first
//   LAS   attained service (GPU-seconds), least first
//   FTF   finish-time fairness rho = (now - arrival + remaining) / ideal duration, largest first
// Ties are broken by arrival time, then job id, so the order is total and deterministic.
#pragma once

#include <string_view>
#include <vector>

#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

enum class Policy { kFifo, kSrtf, kLas, kFtf };

std::string_view PolicyName(Policy policy);

// Sorts `jobs` into the policy's order at virtual time now_s.
void OrderJobs(Policy policy, double now_s, std::vector<const SchedJob*>& jobs);

}  // namespace troupe::scheduling
