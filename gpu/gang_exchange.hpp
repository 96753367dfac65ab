// The data-parallel exchange of a gang job whose parts run in several processes (docs/gpu.md,
// "Gangs across nodes"): every `exchange_every_steps` steps each part contributes its gradient,
// the parts all-reduce them across processes (actors/allreduce_rank_actor.hpp) and every part
// applies the mean to its copy of the weights.
//
// The model is real data-parallel training of a linear regression: the weights w have the job's
// gradient size (`floats`), and the data are rows (x, y) with y = x·w* + noise, where x, the
// target weights w* and the noise are seeded values (SeededValue; the job's seed). At exchange e,
// part `rank` draws its own mini-batch of kGangBatchRows rows (seeded by seed, rank, e) and
// computes the gradient of the mean squared error of that batch at ITS CURRENT weights; the mean
// of the parts' gradients is applied with GangLearningRate, which shrinks with `floats` so the
// descent converges at any size. The held-out loss (GangHeldOutLoss) falls as the parts learn w*.
// Every part applies the same sum to the same weights, so all parts keep equal weights, and the
// weights after any number of exchanges can be recomputed in one process: ReferenceWeights. An
// all-reduce whose owners add in rank order gives the reference bit for bit, wherever its ranks
// ran. The cost of an exchange is O(kGangBatchRows × floats) per part.
//
// Exchanges are counted over the job's whole life, not a lease: a lease resumes at the next
// exchange index from the weights the previous one ended with (the job keeps them between
// leases, messages/gang_weights.hpp), so a job trained over several leases ends where one
// continuous run of as many exchanges would (AdvanceReferenceWeights).
//
// Plain arithmetic, no state, no actors.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace troupe::gpu {

inline constexpr int32_t kGangBatchRows = 8;     // a part's mini-batch, per exchange
inline constexpr int32_t kGangHeldOutRows = 64;  // the held-out batch of GangHeldOutLoss
inline constexpr float kGangNoise = 1.0f / 64;   // y's noise: this times a value in (-1, 1)

// Row `row` of a seeded data stream: x (x.size() features) and the returned y = x·w* + noise.
// Stream `rank` >= 0 is part rank's training data (exchange e uses rows e*kGangBatchRows, ...);
// rank -1 is the held-out data.
float GangRow(uint64_t seed, int32_t rank, int64_t row, std::span<float> x);

// Part `rank`'s gradient at exchange `exchange` (0, 1, ...): the gradient of the mean squared
// error of its mini-batch at `weights`, out[j] = (2 / B) Σ_b (x_b·w − y_b) x_bj, rows summed in
// order. Precondition: equal lengths.
void GangGradient(uint64_t seed, int32_t rank, int64_t exchange, std::span<const float> weights,
                  std::span<float> out);

// The mean squared error of `weights` on the kGangHeldOutRows held-out rows.
double GangHeldOutLoss(uint64_t seed, std::span<const float> weights);

// The weights before the first exchange: `floats` seeded values (not w*).
std::vector<float> GangInitialWeights(uint64_t seed, int64_t floats);

// The step size for the mean gradient of `ranks` parts over `floats` weights: 3M / (4 (floats +
// M)), M = ranks × kGangBatchRows rows per exchange, which keeps the step below the stability
// limit of the batch's mean squared error (features in (-1, 1)).
float GangLearningRate(int64_t floats, int32_t ranks);

// weights[i] -= (GangLearningRate / ranks) * sum[i], where sum is the `ranks` parts' gradients
// added. Precondition: equal lengths.
void ApplyGangSum(std::span<const float> sum, int32_t ranks, std::span<float> weights);

// The weights of a gang of `ranks` parts after `exchanges` exchanges, computed in this process:
// each exchange's gradients at the current weights added in rank order (AddInRankOrder), then
// applied.
std::vector<float> ReferenceWeights(uint64_t seed, int32_t ranks, int64_t floats,
                                    int64_t exchanges);

// Continues the reference: applies exchanges [from_exchange, to_exchange) to `weights`, as
// ReferenceWeights does (ReferenceWeights(.., e) continued from e to f equals ReferenceWeights(..,
// f) bit for bit: a job that trains over several leases resumes at its next exchange index).
void AdvanceReferenceWeights(uint64_t seed, int32_t ranks, int64_t from_exchange,
                             int64_t to_exchange, std::vector<float>* weights);

// FNV-1a over the floats' bytes: what a part reports instead of its whole weights.
uint64_t WeightsHash(std::span<const float> weights);

}  // namespace troupe::gpu
