// Links whose capacity changes during a run: a slow episode of a link — a `link` straggler, a
// rack's degraded uplink (docs/failures.md, "Stragglers") — runs it at `factor` of its capacity
// over [from_s, to_s).
//
// Contract: FactorAt is a pure lookup, 1 where no stretch of the link holds; where stretches of
// one link overlap, the slowest holds (they do not compose). Built once, immutable.
#pragma once

#include <cstdint>
#include <vector>

namespace troupe::fabric {

struct LinkSlowdown {
  int32_t link = 0;  // a Topology link index
  double from_s = 0;
  double to_s = 0;
  double factor = 1;  // in (0, 1]
};

class LinkSlowdowns {
 public:
  LinkSlowdowns() = default;
  explicit LinkSlowdowns(std::vector<LinkSlowdown> stretches);

  bool empty() const { return stretches_.empty(); }
  // Each link some stretch slows, once, ascending.
  const std::vector<int32_t>& links() const { return links_; }
  // The factor of `link`'s capacity at time t_s.
  double FactorAt(int32_t link, double t_s) const;

 private:
  std::vector<LinkSlowdown> stretches_;  // by link, then from_s
  std::vector<int32_t> links_;
};

}  // namespace troupe::fabric
