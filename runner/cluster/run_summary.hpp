// Run summary: the figures of one run that go into summary.json and the stdout table.
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

namespace troupe {

struct ClusterCapacity {
  int64_t gpus = 0;
  double cpus = 0, memory_gb = 0;
};

struct RunSummary {
  // end_reason: "measured jobs finished" | "all jobs finished" | "deadline".
  std::string config_name, mode, policy, mechanism, end_reason;
  uint64_t seed = 0;
  int64_t jobs_total = 0, jobs_finished = 0, jobs_measured = 0, jobs_measured_finished = 0,
          rounds = 0;
  double jct_mean_s = 0, jct_median_s = 0, jct_p95_s = 0, jct_p99_s = 0;
  double makespan_s = 0;
  double gpu_utilisation = 0, cpu_utilisation = 0, memory_utilisation = 0;  // fractions, 0..1
  // events: timed events (delayed messages; the virtual clock jumps from one to the next);
  // messages: every message the run's actors sent, timed or not.
  uint64_t events = 0, messages = 0;
  double wall_s = 0;
  double events_per_s = 0;
  double messages_per_s = 0;
  // Faults (docs/faults.md): jobs reported failed, GPU time of leases lost, faults applied, and
  // what the fault network did to messages.
  int64_t jobs_failed = 0;
  double wasted_gpu_hours = 0;
  int64_t faults_injected = 0;
  uint64_t messages_dropped = 0, messages_duplicated = 0, messages_delayed = 0;
};

void Summarize(const std::vector<JobRecord>& jobs, const std::vector<RoundRecord>& rounds,
               const ClusterCapacity& capacity, RunSummary* summary);

// The q-quantile (0 <= q <= 1) of `sorted` (ascending), interpolating linearly between the two
// nearest order statistics; 0 for an empty vector.
double Quantile(const std::vector<double>& sorted, double q);

}  // namespace troupe
