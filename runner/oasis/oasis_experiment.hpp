// The OASiS experiments of docs/oasis.md ("Results"), run by scripts/reproduce-oasis.sh: total
// utility of OASiS and the baselines over seeded diurnal workloads, OASiS under misestimated L and
// U, and OASiS against the exact offline optimum on tiny and medium instances.
//
// OASiS's prices are estimated from "past experience": EstimatePrices over a second job stream of
// the same spec drawn with seed + 1000003, never the jobs being scheduled (on tiny instances, as
// in offline_optimum.hpp, over the instance's own jobs). Misestimation multiplies L by
// low_factor and U by high_factor (PriceParams::Scaled).
//
// Contract: deterministic for given arguments; reads no clock (a caller times it if it wants).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduling/oasis/workload_gen.hpp"

namespace troupe::scheduling::oasis {

struct PolicyRun {
  std::string policy;
  uint64_t seed = 0;
  double low_factor = 1, high_factor = 1;  // OASiS's L and U scaling
  double utility = 0;
  int jobs = 0, admitted = 0, finished = 0;
  double gpu_use = 0;  // mean over slots of the worker pool's GPU utilisation
  int violations = 0;
};

// Runs `policy` ("oasis", "fifo", "drf", "rrh", "dorm") on MakeJobs(spec, seed); the factors
// scale OASiS's L and U.
PolicyRun RunPolicy(const WorkloadSpec& spec, uint64_t seed, const std::string& policy,
                    double low_factor = 1, double high_factor = 1);

struct TinyRun {
  uint64_t seed = 0;
  int jobs = 0;
  bool proved = false;           // GLPK proved the optimum
  double optimum = 0;            // the offline optimum's utility
  double oasis = 0;              // OASiS's, estimated prices, simulated
  double alpha = 0;              // max_r max(1, ln(U^r / L)) of those prices
  std::vector<double> baseline;  // fifo, drf, rrh, dorm
};

// OASiS and the baselines against the offline optimum on SmallInstance(seed, size). GLPK's search
// is bounded by nodes (OfflineOptions::node_limit), not time, so the result depends only on the
// arguments; `proved` says whether it ended proved optimal.
TinyRun RunTiny(uint64_t seed, const InstanceSize& size = {}, int node_limit = 200000);

struct ReproduceOptions {
  WorkloadSpec spec;
  std::vector<uint64_t> seeds{1, 2, 3, 4, 5};
  std::vector<double> factors{2};  // misestimation factors (L, U x 0.5 and 2)
  int tiny_instances = 20;         // TinyInstance, seeds 7000, 7001, ...
  int medium_instances = 10;       // 20 jobs, 4 + 4 machines, 12 slots, seeds 8000, 8001, ...
};

// All experiments as Markdown tables (and CSV-like detail lines prefixed "csv,").
std::string ReproduceReport(const ReproduceOptions& options);

}  // namespace troupe::scheduling::oasis
