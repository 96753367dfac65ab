// CollectiveBackend: the all-reduce of a job's dense gradients among its ranks (one rank a GPU).
//
// AllReduceSum(buffers): (*buffers)[r] is rank r's gradient, all of one length; afterwards every
// rank's buffer holds the element-wise sum over ranks, and *seconds is what the exchange cost.
// Three implementations behind this one interface, chosen by config (backends.collective):
//   - "emulated": the bandwidth model the emulated runs use — a ring all-reduce moves
//     2 (N - 1) / N × bytes per rank over the slowest link, plus 2 (N - 1) link latencies —
//     returned as *seconds. It carries no data (emulated jobs have none): buffers are untouched.
//   - "cpu": the reference; really sums the buffers (in rank order, so the result is exact to
//     the float rounding of that order) and reports the measured time.
//   - "nccl": ncclAllReduce among the job's GPUs (rank r on GPU r, one process, ncclCommInitAll);
//     host buffers are staged through device memory, *seconds is the device time of the
//     all-reduce alone. With one GPU it is a one-rank all-reduce (a copy through NCCL).
// Errors (ranks of different lengths, more ranks than GPUs, an NCCL call) are Statuses.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "base/status.hpp"

namespace troupe::gpu {

class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;
  virtual std::string_view name() const = 0;
  // The most ranks one all-reduce may have (emulated and cpu: unbounded, NCCL: visible GPUs).
  virtual int max_ranks() const = 0;
  virtual Status AllReduceSum(std::vector<std::vector<float>>* buffers, double* seconds) = 0;
};

struct LinkModel {
  double bytes_per_s = 12.5e9;  // 100 Gb/s
  double latency_s = 5e-6;
};

// InvalidInput unless there is at least one rank and every rank's buffer has the same length.
Status CheckSameLength(const std::vector<std::vector<float>>& buffers);

// The ring all-reduce time of `bytes` per rank among `ranks` ranks: 0 for one rank.
double RingAllReduceSeconds(double bytes, int ranks, const LinkModel& link);

std::unique_ptr<CollectiveBackend> MakeEmulatedCollective(const LinkModel& link);
std::unique_ptr<CollectiveBackend> MakeCpuCollective();
// From the CUDA backends plugin (gpu/cuda_backends.hpp): Internal where the plugin cannot load,
// NCCL was not built or no GPU answers.
Status MakeNcclCollective(std::unique_ptr<CollectiveBackend>* out);

// "emulated" | "cpu" | "nccl"; InvalidInput for another name.
Status MakeCollectiveBackend(std::string_view kind, const LinkModel& link,
                             std::unique_ptr<CollectiveBackend>* out);

// What the NCCL benchmark of gpu-check.sh reports: a one-process all-reduce of `floats` floats
// per rank among `ranks` GPUs, device-resident, averaged over `repeats` after a warm-up.
struct AllReduceMeasurement {
  double seconds = 0;
  // NCCL's "bus bandwidth": 2 (N - 1) / N × bytes / time (one rank: bytes / time).
  double bus_bytes_per_s = 0;
};
Status MeasureNcclAllReduce(size_t floats, int ranks, int repeats, AllReduceMeasurement* out);

}  // namespace troupe::gpu
