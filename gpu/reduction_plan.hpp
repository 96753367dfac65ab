// ReductionPlan: how a distributed all-reduce among actors cuts a buffer, and the one order in
// which it adds contributions — pure C++, no actors.
//
// The buffer of `length` floats is split into one contiguous chunk per rank (rank r owns chunk r;
// the first length % ranks chunks are one float longer), and each chunk into segments of at most
// `segment_floats`: the unit of one message, so no message exceeds the transport's size limit and
// owners start adding while later segments are still on the wire.
//
// AddInRankOrder does out = c[0]; out += c[1]; ...; out += c[N-1] element by element — the float
// operations of the CPU collective's reference (gpu/collective_backend.hpp, "cpu"), so an
// all-reduce whose owners add with it equals that reference bit for bit, however its messages
// were delayed or reordered.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace troupe::gpu {

struct ReductionSegment {
  int32_t owner = 0;   // the rank that adds this segment's contributions
  int64_t offset = 0;  // first float of the segment in the buffer
  int64_t length = 0;  // floats
};

// Every segment, chunk by chunk (owner 0's first); empty chunks have no segment.
// Preconditions: length >= 0, ranks >= 1, segment_floats >= 1.
std::vector<ReductionSegment> PlanReduction(int64_t length, int32_t ranks, int64_t segment_floats);

// out[i] = contributions[0][i] + contributions[1][i] + ... added left to right; `out` may be
// the very floats of a contribution (not overlapping one at another offset).
// Preconditions: at least one contribution, each as long as out.
void AddInRankOrder(const std::vector<std::span<const float>>& contributions, std::span<float> out);

}  // namespace troupe::gpu
