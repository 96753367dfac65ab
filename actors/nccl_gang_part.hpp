// The compute worker's side of an NCCL gang (docs/gpu.md, "NCCL across processes"): a gang job
// whose parts run in several processes, with backends.collective: nccl, exchanges its gradient
// through one NCCL communicator, one rank per leased GPU, instead of the actor all-reduce.
//
// The protocol (messages/nccl_messages.hpp): the worker names itself in PartStarted (it spawns no
// all-reduce rank), so the job's AllReduceGroup lists the workers by part. Each worker then tells
// part 0's worker (ranks[0]) its GPUs (NcclGangJoin); once all have joined, part 0 plans the ranks
// (gpu::PlanNcclRanks), makes NCCL's unique id and sends every part its NcclGangId; each part
// joins the communicator (gpu::MakeNcclGangComm: ncclCommInitRank per local GPU, grouped, at most
// a minute) and starts stepping.
//
// An exchange: each local rank g (global rank first_rank + i) contributes the gradient of its own
// mini-batch (gpu::GangGradient with rank g) and the part's vote to stop; NCCL sums them in place
// on the devices; every part applies the sum as the mean over all the gang's ranks
// (gpu::ApplyGangSum with nranks). So the weights follow gpu::ReferenceWeights(seed, nranks, ...)
// — bit for bit with two ranks, within float rounding with more (NCCL's order of additions is its
// own; see gpu/nccl_gang.hpp).
//
// Plain functions over the worker's state, no actor: the worker (compute_worker_actor.cpp) sends
// the messages they return. The unique id is made through `make_id` (gpu::MakeNcclUniqueId in a
// worker), so the joining and rank planning run without a GPU.
#pragma once

#include <caf/actor.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "base/status.hpp"
#include "gpu/nccl_gang.hpp"
#include "messages/nccl_messages.hpp"
#include "messages/work_messages.hpp"

namespace troupe {

struct NcclGangJoined {
  int32_t gpus = 0;
  caf::actor worker;  // where its NcclGangId goes
};

struct NcclGangPart {
  std::map<int32_t, NcclGangJoined> joined;  // part 0 only: the parts that joined, by part
  bool answered = false;                     // part 0 only: the ids have been sent
  std::unique_ptr<gpu::NcclGangComm> comm;   // once this part has joined
};

using NcclIdMaker = std::function<Status(gpu::NcclUniqueIdBytes*)>;
using AddressedNcclIds = std::vector<std::pair<caf::actor, NcclGangId>>;

// A part of a gang over several parts that all-reduces with NCCL (backends.collective: nccl).
bool UsesNcclGang(const PartWork& work);

// Part 0, on each NcclGangJoin of its lease (from `worker`): once all `parts` have joined, each
// part's worker and its NcclGangId, by part, sharing one unique id from make_id — or all carrying
// why there is none (a part that joins twice or is out of range, an id that cannot be made).
// Empty while parts are missing, and after it has answered.
AddressedNcclIds CollectNcclJoin(NcclGangPart& gang, const NcclGangJoin& join, caf::actor worker,
                                 int32_t parts, const NcclIdMaker& make_id);

// This part's ranks join the communicator `id` names, on `devices` (one per leased GPU); blocks
// until every rank of the gang has joined or `timeout_s` passed.
Status JoinNcclGang(NcclGangPart& gang, const NcclGangId& id, const std::vector<int32_t>& devices,
                    double timeout_s);

// One exchange (see above): `weights` updated, *seconds the device time of the all-reduce, *stop
// whether any part voted to stop.
Status NcclExchange(NcclGangPart& gang, uint64_t seed, int64_t exchange, bool vote,
                    std::vector<float>& weights, double* seconds, bool* stop);

}  // namespace troupe
