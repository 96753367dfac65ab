// The data-parallel exchange of a gang job whose parts run in several processes (docs/gpu.md,
// "Gangs across nodes"): every `exchange_every_steps` steps each part contributes its gradient,
// the parts all-reduce them across processes (actors/allreduce_rank_actor.hpp) and every part
// applies the same sum to its copy of the weights. The gradients are the job's gradient size of
// seeded values (the GEMM chain has no loss to differentiate), so that the weights after any
// number of exchanges can be recomputed in one process: ReferenceWeights. An all-reduce whose
// owners add in rank order gives the reference bit for bit, wherever its ranks ran.
//
// Plain arithmetic, no state, no actors.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace troupe::gpu {

// Part `rank`'s gradient of exchange `exchange` (0, 1, ...): `floats` seeded values.
void GangGradient(uint64_t seed, int32_t rank, int64_t exchange, std::span<float> out);

// The weights before the first exchange: `floats` seeded values.
std::vector<float> GangInitialWeights(uint64_t seed, int64_t floats);

// weights[i] -= kGangLearningRate * sum[i]. Precondition: equal lengths.
void ApplyGangSum(std::span<const float> sum, std::span<float> weights);
inline constexpr float kGangLearningRate = 1.0f / 1024;

// The weights of a gang of `ranks` parts after `exchanges` exchanges, computed in this process:
// each exchange's gradients added in rank order (AddInRankOrder), then applied.
std::vector<float> ReferenceWeights(uint64_t seed, int32_t ranks, int64_t floats,
                                    int64_t exchanges);

// FNV-1a over the floats' bytes: what a part reports instead of its whole weights.
uint64_t WeightsHash(std::span<const float> weights);

}  // namespace troupe::gpu
