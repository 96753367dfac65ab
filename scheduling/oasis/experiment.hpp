// The OASiS experiments of docs/oasis.md ("Results"), run by scripts/reproduce-oasis.sh: total
// utility of OASiS and the baselines over seeded diurnal workloads, OASiS under misestimated L and
// U, and OASiS against the exact offline optimum on tiny instances.
//
// OASiS's prices are estimated from "past experience": EstimatePrices over a second job stream of
// the same spec drawn with seed + 1000003, never the jobs being scheduled (on tiny instances, as
// in offline_optimum.hpp, over the instance's own jobs). Misestimation multiplies L by
// low_factor and U by high_factor (PriceParams::Scaled).
//
// Calibrated L. On the seed's utilities EstimatePrices gives L ~ 1e-30 (a sigmoid's tail is
// floored at 1e-12 of its best, and eta sums capacities over resources of unlike units), so
// prices stay negligible until a cell is ~90% full and OASiS admits nearly anything that fits.
// "oasis-cal" keeps U and multiplies L by the factor 10^k, k in {0, 3, ..., 30}, that gives the
// most total utility when OASiS schedules the past stream itself (ties: the smaller factor); the
// jobs being scheduled play no part in the choice.
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

// The calibrated L factor of the stream of `seed` (above).
double CalibrateLow(const WorkloadSpec& spec, uint64_t seed);

// Runs `policy` ("oasis", "oasis-cal", "fifo", "drf", "rrh", "dorm") on MakeJobs(spec, seed);
// the factors scale OASiS's L and U (for "oasis-cal", on top of the calibration).
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

TinyRun RunTiny(uint64_t seed, double time_limit_s = 60);

struct ReproduceOptions {
  WorkloadSpec spec;
  std::vector<uint64_t> seeds{1, 2, 3, 4, 5};
  std::vector<double> factors{2, 10};  // misestimation factors
  int tiny_instances = 20;
};

// All experiments as Markdown tables (and CSV-like detail lines prefixed "csv,").
std::string ReproduceReport(const ReproduceOptions& options);

}  // namespace troupe::scheduling::oasis
