// The rank plan of an NCCL gang, and the forwarders to the CUDA backends plugin (nccl_gang.hpp).
#include "gpu/nccl_gang.hpp"

#include <string>

#include "gpu/cuda_backends.hpp"

namespace troupe::gpu {

Status PlanNcclRanks(const std::vector<int32_t>& gpus_per_part, int32_t part, NcclRankPlan* out) {
  if (gpus_per_part.empty()) return Status::InvalidInput("nccl gang: no parts");
  if (part < 0 || static_cast<size_t>(part) >= gpus_per_part.size()) {
    return Status::InvalidInput("nccl gang: part " + std::to_string(part) + " of " +
                                std::to_string(gpus_per_part.size()));
  }
  int64_t total = 0;
  NcclRankPlan plan;
  for (size_t p = 0; p < gpus_per_part.size(); ++p) {
    const int32_t gpus = gpus_per_part[p];
    if (gpus < 1) {
      return Status::InvalidInput("nccl gang: part " + std::to_string(p) + " has " +
                                  std::to_string(gpus) + " GPUs; every part needs one");
    }
    if (static_cast<int32_t>(p) == part) {
      plan.first_rank = static_cast<int32_t>(total);
      plan.local_ranks = gpus;
    }
    total += gpus;
    if (total > kMaxNcclRanks) {
      return Status::InvalidInput("nccl gang: more than " + std::to_string(kMaxNcclRanks) +
                                  " ranks");
    }
  }
  plan.nranks = static_cast<int32_t>(total);
  *out = plan;
  return Status::Ok();
}

Status MakeNcclUniqueId(NcclUniqueIdBytes* out) {
  const CudaBackendsTable* t = nullptr;
  if (Status s = LoadCudaBackends(&t); !s.ok())
    return Status::Internal("nccl gang: " + s.message());
  return t->make_nccl_unique_id(out);
}

Status MakeNcclGangComm(const NcclGangOptions& options, std::unique_ptr<NcclGangComm>* out) {
  if (options.devices.size() != static_cast<size_t>(options.plan.local_ranks) ||
      options.plan.local_ranks < 1 ||
      options.plan.first_rank + options.plan.local_ranks > options.plan.nranks) {
    return Status::InvalidInput("nccl gang: " + std::to_string(options.devices.size()) +
                                " devices for ranks " + std::to_string(options.plan.first_rank) +
                                " +" + std::to_string(options.plan.local_ranks) + " of " +
                                std::to_string(options.plan.nranks));
  }
  const CudaBackendsTable* t = nullptr;
  if (Status s = LoadCudaBackends(&t); !s.ok())
    return Status::Internal("nccl gang: " + s.message());
  return t->make_nccl_gang_comm(options, out);
}

}  // namespace troupe::gpu
