// Links whose capacity changes during a run: a slow episode of a link — a `link` straggler, a
// rack's degraded uplink (docs/failures.md, "Stragglers") — runs it at `factor` of its capacity
// over [from_s, to_s).
//
// Contract: FactorAt is a pure lookup, 1 where no stretch of the link holds; where stretches of
// one link overlap, the slowest holds (they do not compose). Built once, immutable; a lookup
// costs a binary search over the link's changes, however many stretches the run drew.
#pragma once

#include <cstdint>
#include <vector>

#include "fabric/topology.hpp"

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

  bool empty() const { return links_.empty(); }
  // Each link some stretch slows, once, ascending.
  const std::vector<int32_t>& links() const { return links_; }
  // The factor of `link`'s capacity at time t_s.
  double FactorAt(int32_t link, double t_s) const;
  // `link`'s capacity in `topology` at time t_s, in bytes per second.
  double CapacityAt(const Topology& topology, int32_t link, double t_s) const;

 private:
  // From `from_s` until the next change of the same link, the link runs at `factor`.
  struct Change {
    double from_s = 0;
    double factor = 1;
  };
  std::vector<int32_t> links_;
  // timelines_[i]: links_[i]'s changes by time, each factor differing from the one before.
  std::vector<std::vector<Change>> timelines_;
};

}  // namespace troupe::fabric
