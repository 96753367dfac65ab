// A seeded Zipf sampler by rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-inversion
// to generate variates from monotone discrete distributions", ACM TOMACS 6(3), 1996).
//
// ZipfDistribution(n, skew) draws ranks k in [0, n) with P(k) proportional to 1 / (k + 1)^skew:
// rank 0 is the most frequent item. Any skew > 0 works (1.0 included); the parameter server's
// workloads use 0.9-1.3 (HugeCTR's generator: 0.9/1.1/1.3). A draw costs O(1) expected time (a
// few exp/log, about 1.1 uniforms on average) and no table, so n may be as large as 2^53.
//
// Draws depend only on the generator's 64-bit outputs (no std:: distributions), so a seed gives
// the same ranks on every platform. SplitMix64 is a small, fast seeded generator for that; any
// standard uniform random bit generator with 64-bit results works too (std::mt19937_64).
#pragma once

#include <cstdint>
#include <vector>

namespace troupe::paramserver {

// SplitMix64 (Steele, Lea, Flood 2014): a uniform random bit generator in one 64-bit word.
class SplitMix64 {
 public:
  using result_type = uint64_t;
  explicit SplitMix64(uint64_t seed = 0) : state_(seed) {}
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t{0}; }
  uint64_t operator()() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// A uniform double in [0, 1) from the top 53 bits of one 64-bit draw.
template <class Urbg>
double Uniform01(Urbg& rng) {
  static_assert(Urbg::min() == 0 && Urbg::max() == ~uint64_t{0}, "needs 64-bit outputs");
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

class ZipfDistribution {
 public:
  // n >= 1 items, skew > 0.
  ZipfDistribution(uint64_t n, double skew);

  uint64_t n() const { return n_; }
  double skew() const { return skew_; }

  // One rank in [0, n).
  template <class Urbg>
  uint64_t operator()(Urbg& rng) const {
    for (;;) {
      const double u = h_integral_n_ + Uniform01(rng) * (h_integral_x1_ - h_integral_n_);
      const double x = HIntegralInverse(u);
      double k = static_cast<double>(static_cast<int64_t>(x + 0.5));
      if (k < 1) k = 1;
      if (k > static_cast<double>(n_)) k = static_cast<double>(n_);
      if (k - x <= s_ || u >= HIntegral(k + 0.5) - H(k)) return static_cast<uint64_t>(k) - 1;
    }
  }

  // The exact probabilities of ranks 0..n-1 (O(n) time and memory: for tests and small n).
  std::vector<double> Probabilities() const;

 private:
  double H(double x) const;
  double HIntegral(double x) const;
  double HIntegralInverse(double x) const;

  uint64_t n_;
  double skew_;
  double h_integral_x1_, h_integral_n_, s_;
};

// A distribution with its own generator: Next() is the next rank of its seeded stream.
class ZipfSampler {
 public:
  ZipfSampler(uint64_t n, double skew, uint64_t seed) : dist_(n, skew), rng_(seed) {}
  uint64_t Next() { return dist_(rng_); }
  const ZipfDistribution& distribution() const { return dist_; }

 private:
  ZipfDistribution dist_;
  SplitMix64 rng_;
};

}  // namespace troupe::paramserver
