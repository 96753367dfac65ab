// NCCL across processes (docs/gpu.md, "NCCL across processes"): the workers of a gang job whose
// parts run in several processes, with backends.collective: nccl, build one NCCL communicator,
// one rank per leased GPU. After the job's AllReduceGroup (whose `ranks` are then the workers
// themselves):
//
//   every worker --NcclGangJoin--> part 0's worker   how many GPUs this part leased
//   part 0's worker --NcclGangId--> every worker     NCCL's unique id and the part's ranks (or
//                                                    why there is no communicator)
//
// then each worker joins the communicator with its ranks (gpu/nccl_gang.hpp). The unique id is
// 128 opaque bytes (NCCL_UNIQUE_ID_BYTES) naming a bootstrap socket on part 0's host.
// Every type has a free `inspect` and is registered under its name (message_types.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace troupe {

inline constexpr size_t kNcclUniqueIdSize = 128;

struct NcclUniqueId {
  std::array<uint8_t, kNcclUniqueIdSize> bytes{};
};
template <class Inspector>
auto inspect(Inspector& f, NcclUniqueId& x) {
  return f(x.bytes);
}

struct NcclGangJoin {
  double lease_start_s = 0;  // names the lease
  int32_t part = 0;
  int32_t gpus = 0;
};
template <class Inspector>
auto inspect(Inspector& f, NcclGangJoin& x) {
  return f(x.lease_start_s, x.part, x.gpus);
}

struct NcclGangId {
  double lease_start_s = 0;
  NcclUniqueId id;
  int32_t nranks = 0;      // the gang's GPUs
  int32_t first_rank = 0;  // the receiving part's first rank
  std::string why;         // not empty: part 0 could not make the communicator's id
};
template <class Inspector>
auto inspect(Inspector& f, NcclGangId& x) {
  return f(x.lease_start_s, x.id, x.nranks, x.first_rank, x.why);
}

}  // namespace troupe
