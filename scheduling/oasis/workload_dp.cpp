#include "scheduling/oasis/workload_dp.hpp"

#include <algorithm>
#include <limits>

namespace troupe::scheduling::oasis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

WorkloadDp::WorkloadDp(int work) : work_(std::max(0, work)) {}

double WorkloadDp::Fold(const std::vector<double>& curve) {
  static const std::vector<double> kStart = {0.0};
  const std::vector<double>& prev = layers_.empty() ? kStart : layers_.back();
  const int prev_reach = layers_.empty() ? 0 : reach_.back();
  const int most = curve.empty() ? 0 : static_cast<int>(curve.size()) - 1;
  const int reach = std::min(work_, prev_reach + most);
  std::vector<double> next(static_cast<size_t>(reach) + 1, kInf);
  // y outer, w inner: a contiguous min that the compiler vectorises.
  for (int y = 0; y <= most; ++y) {
    const double cy = curve[y];
    const int hi = std::min(reach, prev_reach + y);
    for (int w = y; w <= hi; ++w) {
      const double candidate = prev[w - y] + cy;
      next[w] = candidate < next[w] ? candidate : next[w];
    }
  }
  layers_.push_back(std::move(next));
  reach_.push_back(reach);
  return reach == work_ ? layers_.back()[work_] : kInf;
}

std::vector<int> WorkloadDp::Split(
    int n, const std::function<void(int, std::vector<double>*)>& curve_of) const {
  if (n <= 0 || n > folded() || reach_[n - 1] < work_) return {};
  std::vector<int> workers(n, 0);
  std::vector<double> curve;
  int w = work_;
  for (int i = n - 1; i >= 0 && w > 0; --i) {
    curve_of(i, &curve);
    const int prev_reach = i == 0 ? 0 : reach_[i - 1];
    const int most = std::min(w, static_cast<int>(curve.size()) - 1);
    int best = -1;
    double best_cost = kInf;
    for (int y = std::max(0, w - prev_reach); y <= most; ++y) {
      const double before = i == 0 ? (w - y == 0 ? 0.0 : kInf) : layers_[i - 1][w - y];
      const double candidate = before + curve[y];
      if (candidate < best_cost) {
        best_cost = candidate;
        best = y;
      }
    }
    workers[i] = best;
    w -= best;
  }
  return workers;
}

}  // namespace troupe::scheduling::oasis
