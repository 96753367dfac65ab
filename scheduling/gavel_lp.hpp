// Gavel's heterogeneity-aware allocations (Narayanan et al., "Heterogeneity-Aware Cluster
// Scheduling Policies for Deep Learning Workloads", OSDI '20, section 4), solved as linear programs
// with GLPK (opt_lp.hpp).
//
// An allocation X[j][t] is the fraction of wall time job j should spend on GPU type t (on its
// `gpus` GPUs of that type): every X in [0, 1], each job's row sums to at most 1, and on each type
// the GPUs the jobs hold on average, sum_j gpus_j X[j][t], stay within the type's GPUs. Job j's
// effective throughput is sum_t T[j][t] X[j][t].
//
// - Max-min fairness ("LAS" in the paper, its heterogeneity-aware least attained service):
//   maximise the smallest effective throughput, each normalised by the job's throughput on an
//   average GPU of the cluster (sum_t T[j][t] * gpus_t / all GPUs); then, with that minimum held,
//   the sum of the normalised throughputs (so that no GPU idles that a job could use).
// - Finish-time fairness (Themis, as Gavel writes it): minimise the largest
//   rho_j = (elapsed_j + remaining_j / throughput_j) / (elapsed_j + remaining_j / isolated_j),
//   where isolated_j is the throughput of an equal share of the cluster (1/n of each type, at most
//   all of the job's time). rho <= r is linear for a fixed r (throughput_j >= remaining_j /
//   (r * D_j - elapsed_j)), so r is found by bisection over feasibility LPs; the allocation at the
//   smallest feasible r maximises the sum of normalised throughputs.
//
// A heterogeneity-agnostic allocation is the same program over throughputs that are equal on
// every type (the caller passes them so). When GLPK fails the allocation is the equal share and
// `solved` is false. Deterministic.
#pragma once

#include <cstdint>
#include <vector>

namespace troupe::scheduling {

enum class GavelObjective { kMaxMinFairness, kFinishTimeFairness };

struct GavelJob {
  int32_t gpus = 1;
  std::vector<double> throughput;   // per GPU type: iterations per second on `gpus` GPUs of it
  double elapsed_s = 0;             // FTF: since it arrived
  double remaining_iterations = 0;  // FTF
};

struct GavelAllocation {
  bool solved = false;
  std::vector<std::vector<double>> x;  // [job][type]
  double objective = 0;  // max-min: the smallest normalised throughput; FTF: the largest rho
};

GavelAllocation GavelAllocate(GavelObjective objective, const std::vector<GavelJob>& jobs,
                              const std::vector<int32_t>& gpus_of_type);

// The equal share: every job 1/n of each type's GPUs (weighted by its GPUs), at most all its time.
GavelAllocation EqualShare(const std::vector<GavelJob>& jobs,
                           const std::vector<int32_t>& gpus_of_type);

}  // namespace troupe::scheduling
