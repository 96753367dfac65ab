#include "paramserver/zipf.hpp"

#include <cassert>
#include <cmath>

namespace troupe::paramserver {
namespace {

// log1p(x) / x, continuous at 0.
double Helper1(double x) {
  if (std::fabs(x) > 1e-8) return std::log1p(x) / x;
  return 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

// expm1(x) / x, continuous at 0.
double Helper2(double x) {
  if (std::fabs(x) > 1e-8) return std::expm1(x) / x;
  return 1 + x * 0.5 * (1 + x * (1.0 / 3) * (1 + 0.25 * x));
}

}  // namespace

ZipfDistribution::ZipfDistribution(uint64_t n, double skew) : n_(n), skew_(skew) {
  assert(n >= 1 && skew > 0);
  h_integral_x1_ = HIntegral(1.5) - 1;
  h_integral_n_ = HIntegral(static_cast<double>(n) + 0.5);
  s_ = 2 - HIntegralInverse(HIntegral(2.5) - H(2));
}

// h(x) = x^-skew, the density the ranks are drawn under.
double ZipfDistribution::H(double x) const { return std::exp(-skew_ * std::log(x)); }

// H(x) = (x^(1 - skew) - 1) / (1 - skew), an antiderivative of h (log x at skew 1).
double ZipfDistribution::HIntegral(double x) const {
  const double log_x = std::log(x);
  return Helper2((1 - skew_) * log_x) * log_x;
}

double ZipfDistribution::HIntegralInverse(double x) const {
  double t = x * (1 - skew_);
  if (t < -1) t = -1;  // rounding guard: x is never below H's infimum in exact arithmetic
  return std::exp(Helper1(t) * x);
}

std::vector<double> ZipfDistribution::Probabilities() const {
  std::vector<double> p(n_);
  double sum = 0;
  for (uint64_t i = n_; i >= 1; --i) sum += p[i - 1] = H(static_cast<double>(i));  // small first
  for (double& x : p) x /= sum;
  return p;
}

}  // namespace troupe::paramserver
