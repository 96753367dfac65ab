#include "actors/nccl_gang_part.hpp"

#include <span>
#include <string>
#include <utility>

#include "base/status_macros.hpp"
#include "gpu/gang_exchange.hpp"

namespace troupe {

static_assert(kNcclUniqueIdSize == gpu::kNcclUniqueIdBytes, "one size of NCCL's unique id");

bool UsesNcclGang(const PartWork& work) { return work.collective == "nccl" && work.parts > 1; }

namespace {

// Every part that joined learns why the gang has no communicator.
AddressedNcclIds Refusals(const NcclGangPart& gang, double lease_start_s, const std::string& why) {
  AddressedNcclIds out;
  for (const auto& [part, joined] : gang.joined) {
    NcclGangId id;
    id.lease_start_s = lease_start_s;
    id.why = why;
    out.emplace_back(joined.worker, std::move(id));
  }
  return out;
}

}  // namespace

AddressedNcclIds CollectNcclJoin(NcclGangPart& gang, const NcclGangJoin& join, caf::actor worker,
                                 int32_t parts, const NcclIdMaker& make_id) {
  if (gang.answered) return {};
  if (join.part < 0 || join.part >= parts || gang.joined.count(join.part)) {
    gang.answered = true;
    const std::string why = "nccl gang: part " + std::to_string(join.part) +
                            " joined twice or is not one of " + std::to_string(parts);
    AddressedNcclIds out = Refusals(gang, join.lease_start_s, why);
    NcclGangId refused;
    refused.lease_start_s = join.lease_start_s;
    refused.why = why;
    out.emplace_back(std::move(worker), std::move(refused));
    return out;
  }
  gang.joined[join.part] = NcclGangJoined{join.gpus, std::move(worker)};
  if (static_cast<int32_t>(gang.joined.size()) < parts) return {};
  gang.answered = true;
  std::vector<int32_t> gpus;
  for (const auto& [part, joined] : gang.joined) gpus.push_back(joined.gpus);
  NcclGangId shared;
  shared.lease_start_s = join.lease_start_s;
  if (Status s = make_id(&shared.id.bytes); !s.ok()) {
    return Refusals(gang, join.lease_start_s, s.message());
  }
  AddressedNcclIds out;
  for (const auto& [part, joined] : gang.joined) {
    gpu::NcclRankPlan plan;
    if (Status s = gpu::PlanNcclRanks(gpus, part, &plan); !s.ok()) {
      return Refusals(gang, join.lease_start_s, s.message());
    }
    NcclGangId id = shared;
    id.nranks = plan.nranks;
    id.first_rank = plan.first_rank;
    out.emplace_back(joined.worker, std::move(id));
  }
  return out;
}

Status JoinNcclGang(NcclGangPart& gang, const NcclGangId& id, const std::vector<int32_t>& devices,
                    double timeout_s) {
  if (!id.why.empty()) return Status::Internal(id.why);
  gpu::NcclGangOptions options;
  options.id = id.id.bytes;
  options.plan.nranks = id.nranks;
  options.plan.first_rank = id.first_rank;
  options.plan.local_ranks = static_cast<int32_t>(devices.size());
  options.devices = devices;
  options.timeout_s = timeout_s;
  return gpu::MakeNcclGangComm(options, &gang.comm);
}

Status NcclExchange(NcclGangPart& gang, uint64_t seed, int64_t exchange, bool vote,
                    std::vector<float>& weights, double* seconds, bool* stop) {
  if (!gang.comm) return Status::Internal("nccl gang: not joined");
  const gpu::NcclRankPlan& plan = gang.comm->plan();
  const size_t floats = weights.size();
  std::vector<std::vector<float>> buffers(static_cast<size_t>(plan.local_ranks),
                                          std::vector<float>(floats + 1));
  for (int32_t i = 0; i < plan.local_ranks; ++i) {
    std::vector<float>& buffer = buffers[static_cast<size_t>(i)];
    gpu::GangGradient(seed, plan.first_rank + i, exchange, weights,
                      std::span<float>(buffer).first(floats));
    buffer[floats] = vote ? 1.0f : 0.0f;
  }
  RETURN_IF_ERROR(gang.comm->AllReduceSum(&buffers, seconds));
  const std::vector<float>& sum = buffers[0];
  gpu::ApplyGangSum(std::span<const float>(sum).first(floats), plan.nranks, weights);
  *stop = sum[floats] > 0;
  return Status::Ok();
}

}  // namespace troupe
