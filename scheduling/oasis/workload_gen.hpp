// Seeded clusters and job streams for OASiS experiments (slot_simulator.hpp, docs/oasis.md).
//
// Settings. The paper gives the utility's ranges (sigmoid g1 in [1,100], g2 in [4,6], g3 in
// [1,15] slots) and T = 300; the paper's evaluation section is not in the text available, so the
// rest follows bench/oasis_bench.cpp: one-hour slots; worker servers of 8 GPUs, 48 CPUs, 256 GB, 2
// TB, 40 Gbps; PS machines of 0 GPUs, 48 CPUs, 256 GB, 2 TB, 100 Gbps; jobs with E in [10,50], N in
// [10,100], M in [50,200], tau in [0.2,2] s, gradients in [0.1,1] Gb; a worker 1-4 GPUs, 2-8 CPUs,
// 8-32 GB, 20-100 GB, 1-5 Gbps; a PS 2-8 CPUs, 8-32 GB, 20-100 GB, 5-20 Gbps. Integer ranges are
// inclusive, real ones uniform.
//
// Diurnal arrivals. The rate in slot t is
//   lambda(t) = rate (1 + A sin(2 pi (t mod P) / P - pi / 2))
// with P = 24 slots (a day of one-hour slots), A = 0.8: lowest at t = 0 (mod 24), 9x higher at
// t = 12. With `jobs` > 0 exactly that many jobs arrive, each in a slot drawn with probability
// proportional to lambda(t); otherwise each slot gets Poisson(lambda(t)) jobs.
//
// TinyInstance: the offline optimum's size (docs/oasis.md: GLPK proves these optimal in about a
// second): 5-8 jobs, 1-2 worker servers and 1-2 PS machines, 6 slots of 2 s; the generator of
// tests/unit/oasis_bruteforce_test.cpp with the paper's sigmoid utilities (g3 in [1,15]), jobs
// arriving in any slot. SmallInstance: the same generator at other sizes.
//
// Contract: the same spec and seed give the same cluster and jobs (std::mt19937_64, libstdc++'s
// distributions); jobs are sorted by arrival, ids 0, 1, ... in that order.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduling/oasis/model.hpp"

namespace troupe::scheduling::oasis {

struct Range {
  double lo = 0;
  double hi = 0;
};

struct JobRanges {
  Range epochs{10, 50}, chunks{10, 100}, minibatches{50, 200};  // integers
  Range minibatch_s{0.2, 2}, gradient{0.1, 1};
  Range worker_gpu{1, 4}, worker_cpu{2, 8};  // integers
  Range worker_memory{8, 32}, worker_storage{20, 100}, worker_bandwidth{1, 5};
  Range ps_cpu{2, 8};  // integer
  Range ps_memory{8, 32}, ps_storage{20, 100}, ps_bandwidth{5, 20};
  UtilityKind utility = UtilityKind::kSigmoid;
  Range g1{1, 100}, g2{4, 6}, g3{1, 15};
};

struct WorkloadSpec {
  int slots = 300;
  double slot_s = 3600;
  int worker_servers = 50;
  int ps_machines = 50;
  ResourceVector worker_capacity{8, 48, 256, 2000, 40};
  ResourceVector ps_capacity{0, 48, 256, 2000, 100};
  int jobs = 0;                // > 0: exactly this many
  double jobs_per_slot = 2.5;  // the mean rate otherwise (and the shape's scale)
  double diurnal_amplitude = 0.8;
  int diurnal_period = 24;
  JobRanges ranges;
};

Cluster MakeCluster(const WorkloadSpec& spec);
// The arrival rate of slot t.
double DiurnalRate(const WorkloadSpec& spec, int t);
std::vector<Job> MakeJobs(const WorkloadSpec& spec, uint64_t seed);

struct Instance {
  Cluster cluster;
  std::vector<Job> jobs;
};
// The sizes of a small instance: jobs, worker servers, PS machines drawn from [lo, hi]; slots.
struct InstanceSize {
  int jobs_lo = 5, jobs_hi = 8;
  int workers_lo = 1, workers_hi = 2;
  int ps_lo = 1, ps_hi = 2;
  int slots = 6;
};
Instance TinyInstance(uint64_t seed);  // SmallInstance(seed, {})
Instance SmallInstance(uint64_t seed, const InstanceSize& size);

}  // namespace troupe::scheduling::oasis
