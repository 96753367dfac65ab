// Run summary: the figures of one run that go into summary.json and the stdout table, held in
// summary.json's own message (messages/summary.proto's ClusterRunSummary).
//
// Contract: Summarize derives the statistics from the job and round records alone, so a summary
// can always be recomputed from jobs.csv and rounds.csv. It fills the job and round counts, the JCT
// statistics (over measured jobs that finished; percentiles interpolate linearly between order
// statistics, as numpy's default does), the makespan (end of the last round) and the utilisation
// of each resource (allocated resource-time from the rounds / (capacity x makespan)). It leaves the
// identity fields (names, seed, end_reason) and the runtime counters (events, messages, wall_s,
// events_per_s) as the caller set them. With nothing to measure, a statistic is 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages/records.hpp"
#include "messages/summary.pb.h"

namespace troupe {

struct ClusterCapacity {
  int64_t gpus = 0;
  double cpus = 0, memory_gb = 0;
};

void Summarize(const std::vector<JobRecord>& jobs, const std::vector<RoundRecord>& rounds,
               const ClusterCapacity& capacity, summaries::ClusterRunSummary* summary);

// faults.recovery: one job's GPU time held (its leases, and those cut short up to the failure)
// in job seconds — GPU-seconds over the job's GPUs, so that a smaller lease (continue_smaller)
// counts at the GPUs it held — and its productive share of it (0 when it held nothing).
double HeldS(const JobRecord& job, const JobRecovery& costs);
double EffectiveRatio(const JobRecord& job, const JobRecovery& costs);
// summary.recovery from the jobs and their recovery costs (jobs without a record cost nothing).
void SummarizeRecovery(const std::vector<JobRecord>& jobs,
                       const std::vector<JobRecoveryRecord>& recovery,
                       summaries::ClusterRunSummary* summary);

// The q-quantile (0 <= q <= 1) of `sorted` (ascending), interpolating linearly between the two
// nearest order statistics; 0 for an empty vector.
double Quantile(const std::vector<double>& sorted, double q);

}  // namespace troupe
