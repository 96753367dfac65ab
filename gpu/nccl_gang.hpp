// NCCL across processes: one communicator for a gang job whose parts run in several processes
// (`troupe node`s), one NCCL rank per leased GPU (docs/gpu.md, "NCCL across processes").
//
// The communicator is born from NCCL's unique id: part 0's worker makes it (MakeNcclUniqueId,
// ncclGetUniqueId: 128 bytes naming a bootstrap socket on part 0's host), the id travels to the
// other parts as an actor message (messages/nccl_messages.hpp), and every part joins with the
// ranks of its own GPUs (MakeNcclGangComm: ncclCommInitRankConfig per local GPU, grouped with
// ncclGroupStart/End when a part has several). Ranks are numbered part by part, in part order
// (PlanNcclRanks): part p's GPU i is rank Σ_{q<p} gpus(q) + i.
//
// Reduction order: NCCL picks its algorithm (ring or tree) and so the order of the float
// additions; it is not the rank order the actor all-reduce guarantees. With two ranks the sum is
// bit-identical anyway (a + b == b + a in IEEE arithmetic); with three or more it may differ from
// the rank-order reference in the last bits, so it is compared within a tolerance, never bit for
// bit.
//
// The rank plan is plain arithmetic (always built, tested on CPU); the unique id and the
// communicator come from the CUDA backends plugin (gpu/cuda_backends.hpp) and answer an Internal
// Status where the plugin, NCCL or a GPU is missing. C++17: gpu/cuda/ includes this header.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.hpp"

namespace troupe::gpu {

inline constexpr size_t kNcclUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
using NcclUniqueIdBytes = std::array<uint8_t, kNcclUniqueIdBytes>;

// The NCCL ranks one part holds in its gang's communicator.
struct NcclRankPlan {
  int32_t nranks = 0;       // the gang's GPUs, all parts together
  int32_t first_rank = 0;   // this part's GPU i is rank first_rank + i
  int32_t local_ranks = 0;  // this part's GPUs
};

// The ranks of part `part` when part p leased gpus_per_part[p] GPUs. InvalidInput when there is
// no part, a part has no GPU, `part` is out of range or the total passes kMaxNcclRanks.
inline constexpr int32_t kMaxNcclRanks = 1 << 16;
Status PlanNcclRanks(const std::vector<int32_t>& gpus_per_part, int32_t part, NcclRankPlan* out);

// One process's share of a cross-process communicator: its local ranks, each on one device.
class NcclGangComm {
 public:
  virtual ~NcclGangComm() = default;
  virtual const NcclRankPlan& plan() const = 0;
  // buffers[i] is local rank i's (global rank plan().first_rank + i): one buffer per local rank,
  // all of one length across the whole gang. Each is copied to its device, all-reduced there in
  // place (ncclAllReduce, sum, grouped over the local ranks) and copied back, so every buffer ends
  // holding the sum over all the gang's ranks. *seconds: the device time of the all-reduce (the
  // slowest local rank). A peer that does not take part within the communicator's timeout, or an
  // NCCL error, aborts the communicator (Internal; every later call fails too).
  virtual Status AllReduceSum(std::vector<std::vector<float>>* buffers, double* seconds) = 0;
};

// NCCL's unique id for a new communicator (ncclGetUniqueId). Made in the process of rank 0.
Status MakeNcclUniqueId(NcclUniqueIdBytes* out);

struct NcclGangOptions {
  NcclUniqueIdBytes id{};
  NcclRankPlan plan;
  std::vector<int32_t> devices;  // local rank i runs on CUDA device devices[i]
  // How long joining, and then each all-reduce, waits for the peers before it aborts.
  double timeout_s = 60;
};

// Joins the communicator named by options.id with this process's plan.local_ranks ranks. It waits
// (blocking the calling thread, at most timeout_s) until every rank of the gang has joined.
Status MakeNcclGangComm(const NcclGangOptions& options, std::unique_ptr<NcclGangComm>* out);

}  // namespace troupe::gpu
