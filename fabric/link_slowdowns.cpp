#include "fabric/link_slowdowns.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace troupe::fabric {

LinkSlowdowns::LinkSlowdowns(std::vector<LinkSlowdown> stretches)
    : stretches_(std::move(stretches)) {
  std::sort(stretches_.begin(), stretches_.end(), [](const LinkSlowdown& a, const LinkSlowdown& b) {
    return std::tie(a.link, a.from_s, a.to_s, a.factor) <
           std::tie(b.link, b.from_s, b.to_s, b.factor);
  });
  for (const LinkSlowdown& s : stretches_) {
    if (links_.empty() || links_.back() != s.link) links_.push_back(s.link);
  }
}

double LinkSlowdowns::FactorAt(int32_t link, double t_s) const {
  // The link's stretches that start by t_s; a link holds few, so they are scanned.
  const auto first = std::lower_bound(stretches_.begin(), stretches_.end(), link,
                                      [](const LinkSlowdown& s, int32_t l) { return s.link < l; });
  double factor = 1;
  for (auto it = first; it != stretches_.end() && it->link == link && it->from_s <= t_s; ++it) {
    if (t_s < it->to_s) factor = std::min(factor, it->factor);
  }
  return factor;
}

}  // namespace troupe::fabric
