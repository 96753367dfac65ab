// Rng: seeded random draws that are the same on every platform and standard library.
//
// Contract: the bits come from std::mt19937_64, whose output the standard fixes for a seed; the
// transforms to uniform and exponential variates are our own, because the algorithms behind
// std::uniform_real_distribution and friends are implementation-defined, and a workload must be
// reproducible from its seed wherever troupe is built. The sequence of values depends only on the
// seed and the order of calls. Not thread-safe: one Rng per stream of draws.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace troupe {

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  uint64_t Bits() { return engine_(); }

  // Uniform on [0, 1): the top 53 bits of one draw, so every value is exactly representable.
  double Uniform01() { return static_cast<double>(Bits() >> 11) * 0x1.0p-53; }

  // Uniform on [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform01(); }

  // Exponential with the given rate (mean 1/rate) by inversion; 1 - U lies in (0, 1], so the
  // logarithm is always finite.
  double Exponential(double rate) { return -std::log(1.0 - Uniform01()) / rate; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace troupe
