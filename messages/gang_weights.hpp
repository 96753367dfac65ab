// A gang job's trained weights across leases (gpu/gang_exchange.hpp, docs/gpu.md): the job actor
// owns them between leases, as it owns its progress.
//
//   job --GangWeights chunks--> each part's worker   after PartStarted: the weights the lease
//                                                    starts from (none on the first lease)
//   part 0's worker --GangWeights chunks--> job      before its PartDone: the weights after the
//                                                    lease's last exchange (all parts hold the
//                                                    same, so one part sends them)
//   job --JobCheckpoint{gang}--> checkpoint store    (with faults) a restarted job resumes from
//   them
//
// A chunk holds at most kGangChunkFloats floats, like a segment of the all-reduce, so no message
// exceeds the middleman's limits whatever the model's size. Between the job, its checkpoint and the
// store the weights are shared, never copied (GangState holds them behind a shared pointer); a
// chunk sent to a worker is a copy of its slice (FloatBlob::Of).
#pragma once

#include <algorithm>
#include <caf/error.hpp>
#include <caf/meta/load_callback.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "messages/allreduce_messages.hpp"

namespace troupe {

inline constexpr int64_t kGangChunkFloats = 1 << 18;  // 1 MiB of floats a message

// The state of a gang's training between two leases: the exchanges applied so far (the next
// lease's first exchange index, which picks its mini-batches) and the weights after them.
struct GangState {
  int64_t exchanges = 0;
  std::shared_ptr<const std::vector<float>> weights;  // none: the seeded initial weights
  int64_t floats() const { return weights ? static_cast<int64_t>(weights->size()) : 0; }
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, GangState& x) {
  FloatBlob blob;
  if constexpr (Inspector::reads_state) {
    if (x.weights) blob = FloatBlob::Of(*x.weights);
    return f(x.exchanges, blob);
  } else {
    auto adopt = [&]() -> caf::error {
      if (blob.bytes() == 0) {
        x.weights.reset();
      } else {
        x.weights = std::make_shared<const std::vector<float>>(blob.ToFloats());
      }
      return caf::none;
    };
    return f(x.exchanges, blob, caf::meta::load_callback(adopt));
  }
}

// One chunk of a gang's weights: floats [offset, offset + values.floats()) of `floats` in all.
struct GangWeights {
  double lease_start_s = 0;  // names the lease
  int64_t offset = 0;
  int64_t floats = 0;
  FloatBlob values;
};
template <class Inspector>
auto inspect(Inspector& f, GangWeights& x) {
  return f(x.lease_start_s, x.offset, x.floats, x.values);
}

// `weights` as chunks of at most kGangChunkFloats floats, in order, each handed to `send`.
template <class Send>
void ForEachGangChunk(double lease_start_s, std::span<const float> weights, Send send) {
  const auto floats = static_cast<int64_t>(weights.size());
  for (int64_t offset = 0; offset < floats; offset += kGangChunkFloats) {
    const int64_t n = std::min(kGangChunkFloats, floats - offset);
    send(GangWeights{
        lease_start_s, offset, floats,
        FloatBlob::Of(weights.subspan(static_cast<size_t>(offset), static_cast<size_t>(n)))});
  }
}

// Weights arriving in chunks: whole once as many floats as expected have come (a duplicated chunk
// would pass for a missing one: the receiver checks the sender's WeightsHash).
class GangWeightsAssembly {
 public:
  // Starts over for `floats` floats.
  void Expect(int64_t floats) {
    values_.assign(static_cast<size_t>(floats), 0.0f);
    missing_ = floats;
  }
  // False for a chunk that does not fit (another length, outside, not whole floats).
  bool Add(const GangWeights& chunk) {
    const auto n = static_cast<int64_t>(chunk.values.floats());
    if (chunk.floats != static_cast<int64_t>(values_.size()) || !chunk.values.whole() ||
        chunk.offset < 0 || n > missing_ || chunk.offset + n > chunk.floats) {
      return false;
    }
    chunk.values.CopyTo(std::span<float>(values_).subspan(static_cast<size_t>(chunk.offset),
                                                          static_cast<size_t>(n)));
    missing_ -= n;
    return true;
  }
  bool whole() const { return missing_ == 0; }
  std::vector<float>& values() { return values_; }
  const std::vector<float>& values() const { return values_; }

 private:
  std::vector<float> values_;
  int64_t missing_ = 0;
};

}  // namespace troupe
