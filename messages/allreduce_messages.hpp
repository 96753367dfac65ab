// The all-reduce among actors (actors/allreduce_rank_actor.hpp): N rank actors, anywhere — one
// process or several `troupe node` processes — sum one float buffer each and end with the sum.
//
//   driver --AllReduceGroup--> every rank            who is who, and the segment size
//   driver --AllReduceStart (request)--> every rank  this rank's buffer for round `round`
//   rank r --AllReducePart--> owner of segment s     r's floats of s (gpu/reduction_plan.hpp)
//   owner --AllReduceSum--> every other rank         s's sum, added in rank order
//   rank --AllReduceResult (response)--> driver      the whole sum
//
// A segment is at most `segment_floats` floats: one message never exceeds the transport's limit,
// and a buffer travels as about 2 (N - 1) / N of its size per rank, as in a ring all-reduce.
// Floats travel as FloatBlob, raw bytes: CAF 0.17 serialises a byte vector with one copy but a
// float vector element by element, about 40x slower.
// Every type has a free `inspect` and is registered under its name, so ranks may live in other
// processes.
#pragma once

#include <caf/actor.hpp>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace troupe {

// Floats as their bytes. The processes of one deployment share the floats' byte order (IEEE 754,
// little-endian on every machine troupe builds for).
struct FloatBlob {
  std::vector<uint8_t> bytes;

  static FloatBlob Of(std::span<const float> values) {
    FloatBlob blob;
    blob.bytes.resize(values.size_bytes());
    if (!values.empty()) std::memcpy(blob.bytes.data(), values.data(), values.size_bytes());
    return blob;
  }
  // Floats held; a blob of a length that is no whole number of floats holds none.
  size_t floats() const { return bytes.size() % sizeof(float) ? 0 : bytes.size() / sizeof(float); }
  bool whole() const { return bytes.size() % sizeof(float) == 0; }
  // Precondition: out.size() == floats().
  void CopyTo(std::span<float> out) const {
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size_bytes());
  }
  std::vector<float> ToFloats() const {
    std::vector<float> out(floats());
    CopyTo(out);
    return out;
  }
};
template <class Inspector>
auto inspect(Inspector& f, FloatBlob& x) {
  return f(x.bytes);
}

struct AllReduceGroup {
  int32_t rank = 0;
  std::vector<caf::actor> ranks;     // by rank
  int64_t segment_floats = 1 << 18;  // 1 MiB of floats a message
};
template <class Inspector>
auto inspect(Inspector& f, AllReduceGroup& x) {
  return f(x.rank, x.ranks, x.segment_floats);
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
