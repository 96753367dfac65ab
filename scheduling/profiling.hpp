// Profiling: how a job's sensitivity matrix W_j and ideal demand become known to the scheduler.
//
// Contract: ProfileJob is pure and deterministic. It learns throughput only through `measure`
// (one call = one point = running the job for `seconds_per_point` on a profiling server and
// reading its throughput relative to the GPU-proportional share); the caller owns any noise and
// its seed. The job is profiled as a one-GPU replica on a whole server (data-parallel jobs scale
// their per-GPU demand with their GPUs), so the CPU axis runs 1..server_cpus CPUs per GPU and
// "full memory" is server_memory_gb per GPU. Modes:
//   oracle      the true matrix and the catalogue's ideal demand, no points, no time;
//   optimistic  Synergy's: the CPU axis measured at full memory on the integer CPU counts chosen
//               by a binary search (SearchCpuAxis; at most 8 points on 24 CPUs), the memory
//               axis modelled analytically from DatasetModel;
//   naive       every integer CPU count × naive_memory_points memory levels (24 × 10 = 240).
// The estimate is always laid out on the truth's grid (only the oracle reads truth's values).
// The ideal demand is read off the estimate by IdealDemandOf (see there), in every mode but the
// oracle, which returns the catalogue's.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "messages/sensitivity.hpp"

namespace troupe::scheduling {

enum class ProfilingMode { kOracle, kOptimistic, kNaive };

// "oracle" | "optimistic" | "naive".
const char* ProfilingModeName(ProfilingMode mode);
bool ParseProfilingMode(std::string_view text, ProfilingMode* out);

struct ProfilingOptions {
  ProfilingMode mode = ProfilingMode::kOptimistic;
  double seconds_per_point = 60;
  // Relative noise on each measured point (0 = exact). ProfileJob never draws noise (the measure
  // function does, see NoisyMeasure); it widens the ideal-demand tolerance to 3 × noise_stddev,
  // about two standard deviations of the difference of two measurements: less is not evidence.
  double noise_stddev = 0;
  // Binary search: descend into the lower half when the CPUs above a point add less than this.
  double improvement_threshold = 0.10;
  // Ideal demand: the least resources within this fraction of the best estimated throughput.
  double ideal_tolerance = 0.01;
  int32_t naive_memory_points = 10;
  // The profiling server: Synergy's 8 GPUs, 24 CPUs, 500 GB.
  int32_t server_gpus = 8;
  double server_cpus = 24;
  double server_memory_gb = 500;
};

// The analytic memory axis (per GPU). A DNN-aware cache (MinIO) keeps whatever part of the
// dataset fits and never evicts it, so every epoch hits a fixed fraction min(1, m / D) of the
// samples and reads the rest from storage. The input pipeline overlaps storage reads with
// compute, so the memory-bound throughput is storage_throughput / miss fraction (the per-sample
// read cost is 1 / storage_throughput) and the job runs at min(CPU-bound, memory-bound). Below
// its working set the pipeline's own buffers do not fit and the job thrashes at
// thrash_throughput. The catalogue's values (configs/models/synergy_models.csv columns
// dataset_gb_per_gpu, storage_throughput, min_mem_gb_per_gpu, thrash_throughput) are derived
// from the same profiles as synergy_sensitivity.csv: fitted so that this model reproduces each
// model's memory axis (docs/profiling.md gives the fit and its error). All zero: a
// memory-insensitive job.
struct DatasetModel {
  double dataset_gb_per_gpu = 0;     // D: what one GPU reads per epoch; 0 = fits in any memory
  double storage_throughput = 0;     // throughput with every sample read from storage (no cache)
  double min_memory_gb_per_gpu = 0;  // the pipeline's working set
  double thrash_throughput = 0;      // throughput below the working set

  // Throughput the input pipeline sustains with this memory per GPU (+infinity: no bound).
  double MemoryBound(double memory_gb_per_gpu) const;
};

// A job's demand vector: the CPUs and memory per GPU it wants, and its throughput there.
struct DemandVector {
  double cpus_per_gpu = 0, memory_gb_per_gpu = 0, speedup = 1;
};

// The ideal demand read off a matrix: with B its best value, the smallest grid CPU count at which
// some memory reaches (1 - tolerance) × B, then the smallest grid memory reaching it at that CPU
// count. Only grid points are candidates. An empty matrix (insensitive) gives {0, 0, 1}.
DemandVector IdealDemandOf(const SensitivityMatrix& matrix, double tolerance);

struct ProfilePoint {
  double cpus_per_gpu = 0, memory_gb_per_gpu = 0, throughput = 0;
};

struct ProfileResult {
  SensitivityMatrix estimated;  // on the same grid as the truth
  double ideal_cpus_per_gpu = 0, ideal_memory_gb_per_gpu = 0, speedup_at_ideal = 1;
  int32_t points_profiled = 0;
  double profiling_s = 0;            // points_profiled × seconds_per_point
  std::vector<ProfilePoint> points;  // every measurement, in the order taken
};

// Runs the job on the profiling server at this allocation per GPU and returns its throughput.
using MeasureFn = std::function<double(double cpus_per_gpu, double memory_gb_per_gpu)>;

// Profiles one job. `truth` gives the estimate's grid (and, for the oracle, its values);
// `catalogue_ideal` is what the oracle returns (computed from truth if its cpus_per_gpu is 0);
// `measure` defaults to truth.At (exact) when empty.
ProfileResult ProfileJob(const SensitivityMatrix& truth, const DemandVector& catalogue_ideal,
                         const DatasetModel& dataset, const ProfilingOptions& options,
                         const MeasureFn& measure = {});

// truth.At × max(0, 1 + relative_stddev × z), z standard normal by Box–Muller from two calls of
// `uniform01` (uniform on [0, 1), e.g. an actor's seeded Rng). Keeps a copy of the matrix.
MeasureFn NoisyMeasure(const SensitivityMatrix& truth, double relative_stddev,
                       std::function<double()> uniform01);

// Building blocks, exposed for tests and reports.
// The binary search's CPU counts, in the order measured, with their throughputs at full memory.
// It measures all CPUs, the proportional share (server_cpus / server_gpus) and one CPU, stops
// there if one CPU is within improvement_threshold of all, else bisects [1, all CPUs]: it
// descends into the lower half when all CPUs beat the midpoint by less than the threshold, else
// ascends, and measures no point twice. At most 3 + ceil(log2(server_cpus - 1)) points: 8 on
// Synergy's server, 3 for a flat curve.
std::vector<ProfilePoint> SearchCpuAxis(const ProfilingOptions& options, const MeasureFn& measure);
// The optimistic estimate on `grid`'s points: min(cpu_curve(c), dataset.MemoryBound(m)).
SensitivityMatrix CombineAxes(const SensitivityMatrix& grid,
                              const std::function<double(double)>& cpu_curve,
                              const DatasetModel& dataset);
// The naive memory levels: the grid's points up to full memory, full memory itself, then
// midpoints of the widest gaps until there are `count` (20.83, 41.67, 62.5, 93.75, 125, 156.25,
// 187.5, 218.75, 250 and 500 GB on Synergy's grid and server).
std::vector<double> NaiveMemoryLevels(const std::vector<double>& grid, double full_memory_gb,
                                      int32_t count);

}  // namespace troupe::scheduling
