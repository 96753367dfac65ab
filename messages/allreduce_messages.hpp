// The all-reduce among actors (actors/allreduce_rank_actor.hpp): N rank actors, anywhere — one
// process or several `troupe node` processes — sum one float buffer each and end with the sum.
//
//   driver --AllReduceGroup--> every rank            who is who, and the segment size
//   driver --AllReduceStart (request)--> every rank  this rank's buffer for round `round`
//   rank r --AllReducePart--> owner of segment s     r's floats of s (gpu/reduction_plan.hpp)
//   owner --AllReduceSum--> every other rank         s's sum, added in rank order
//   rank --AllReduceResult (response)--> driver      the whole sum
//   rank --FlowStart--> fabric, fabric --FlowDone--> rank   with a fabric, before a part or sum
//                                                    crosses servers (messages/fabric_messages.hpp)
//
// A segment is at most `segment_floats` floats: one message never exceeds the transport's limit,
// and a buffer travels as about 2 (N - 1) / N of its size per rank, as in a ring all-reduce.
// Floats travel as FloatBlob (messages/float_blob.hpp): raw bytes on the wire, and in one process
// views of the sender's buffer, not copies.
// Every type has a free `inspect` and is registered under its name, so ranks may live in other
// processes.
#pragma once

#include <caf/actor.hpp>
#include <cstdint>
#include <vector>

#include "messages/float_blob.hpp"

namespace troupe {

struct AllReduceGroup {
  int32_t rank = 0;
  std::vector<caf::actor> ranks;     // by rank
  int64_t segment_floats = 1 << 18;  // 1 MiB of floats a message
  // Optional, together: the run's fabric (actors/fabric_actor.hpp) and each rank's server. A rank
  // then sends a part or a sum to a rank on another server only when the fabric says its bytes
  // are through (FlowStart, FlowDone); ranks on one server never ask. Unset: no fabric.
  caf::actor fabric;
  std::vector<int32_t> servers;  // by rank
};
template <class Inspector>
auto inspect(Inspector& f, AllReduceGroup& x) {
  return f(x.rank, x.ranks, x.segment_floats, x.fabric, x.servers);
}

struct AllReduceStart {
  int64_t round = 0;  // rounds run one after another; each rank's buffer has the same length
  FloatBlob values;
};
template <class Inspector>
auto inspect(Inspector& f, AllReduceStart& x) {
  return f(x.round, x.values);
}

struct AllReducePart {
  int64_t round = 0;
  int32_t from = 0;
  int32_t segment = 0;
  FloatBlob values;
};
template <class Inspector>
auto inspect(Inspector& f, AllReducePart& x) {
  return f(x.round, x.from, x.segment, x.values);
}

struct AllReduceSum {
  int64_t round = 0;
  int32_t segment = 0;
  FloatBlob values;
};
template <class Inspector>
auto inspect(Inspector& f, AllReduceSum& x) {
  return f(x.round, x.segment, x.values);
}

struct AllReduceResult {
  int64_t round = 0;
  FloatBlob values;
};
template <class Inspector>
auto inspect(Inspector& f, AllReduceResult& x) {
  return f(x.round, x.values);
}

}  // namespace troupe
