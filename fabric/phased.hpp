// The phased traffic model (config TrafficModel.phased): each iteration of a job is its compute,
// then its communication as a burst; the bursts of jobs that share links share them max-min
// (FlowSharing) only while they overlap. Jobs whose bursts interleave — one computes while the
// other communicates — do not slow each other, the effect CASSINI ("CASSINI: Network-Aware Job
// Scheduling in Machine Learning Clusters", NSDI '24) places jobs to get.
//
// Contract: SimulatePhased runs the jobs' iterations from time 0 (each job's first compute starts
// at its offset_s) as a fluid event simulation — the rates change only when a burst starts or
// ends — until `horizon_s` or until every job has done max_iterations (a job that has goes on
// sending, uncounted, so that the others meet its bursts the whole time; the run also ends once
// one job has done 16 x max_iterations and every job has counted one), and returns each job's
// mean communication seconds per iteration (the burst's length, start to end, averaged over its
// first max_iterations completed; its solo value when it completed none). Deterministic: the same
// inputs give the same outputs. Its cost grows with the bursts simulated, not with the horizon's
// length.
#pragma once

#include <cstdint>
#include <vector>

namespace troupe::fabric {

struct PhasedJob {
  double compute_s = 0;  // per iteration, before its burst
  double offset_s = 0;   // when its first compute starts
  double latency_s = 0;  // added to each burst (the collective's latency terms)
  double bytes_per_flow = 0;
  std::vector<std::vector<int32_t>> flow_links;  // each flow's links (Topology::Route)
  double weight = 1;
};

struct PhasedOptions {
  double horizon_s = 0;         // simulated time at most (0 or less: no limit but max_iterations)
  int32_t max_iterations = 64;  // counted per job at most
};

// capacities: bytes per second by link index.
std::vector<double> SimulatePhased(const std::vector<double>& capacities,
                                   const std::vector<PhasedJob>& jobs,
                                   const PhasedOptions& options);

}  // namespace troupe::fabric
