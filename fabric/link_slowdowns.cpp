#include "fabric/link_slowdowns.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <utility>

namespace troupe::fabric {
namespace {

// One link's stretches as (time, factor) changes: from each instant a stretch starts or ends where
// the slowest stretch open changes, the factor of that stretch (1 when none is open).
std::vector<std::pair<double, double>> Timeline(const std::vector<LinkSlowdown>& stretches) {
  std::map<double, std::vector<std::pair<bool, double>>> at;  // time -> (opens?, factor)
  for (const LinkSlowdown& s : stretches) {
    if (!(s.from_s < s.to_s) || !(s.factor < 1)) continue;  // no time, or not slower (or NaN)
    at[s.from_s].push_back({true, s.factor});
    at[s.to_s].push_back({false, s.factor});
  }
  std::multiset<double> open;
  std::vector<std::pair<double, double>> timeline;
  for (const auto& [t, changes] : at) {
    for (const auto& [opens, factor] : changes) {
      if (opens) {
        open.insert(factor);
      } else {
        open.erase(open.find(factor));
      }
    }
    const double factor = open.empty() ? 1.0 : *open.begin();
    if (factor != (timeline.empty() ? 1.0 : timeline.back().second))
      timeline.push_back({t, factor});
  }
  return timeline;
}

}  // namespace

LinkSlowdowns::LinkSlowdowns(std::vector<LinkSlowdown> stretches) {
  std::stable_sort(stretches.begin(), stretches.end(),
                   [](const LinkSlowdown& a, const LinkSlowdown& b) { return a.link < b.link; });
  for (auto first = stretches.begin(); first != stretches.end();) {
    auto last = std::find_if(first, stretches.end(),
                             [&](const LinkSlowdown& s) { return s.link != first->link; });
    std::vector<Change> changes;
    for (const auto& [t, factor] : Timeline({first, last})) changes.push_back({t, factor});
    if (!changes.empty()) {
      links_.push_back(first->link);
      timelines_.push_back(std::move(changes));
    }
    first = last;
  }
}

double LinkSlowdowns::FactorAt(int32_t link, double t_s) const {
  const auto it = std::lower_bound(links_.begin(), links_.end(), link);
  if (it == links_.end() || *it != link) return 1;
  const std::vector<Change>& changes = timelines_[static_cast<size_t>(it - links_.begin())];
  // The last change at or before t_s.
  const auto next = std::upper_bound(changes.begin(), changes.end(), t_s,
                                     [](double t, const Change& c) { return t < c.from_s; });
  return next == changes.begin() ? 1 : std::prev(next)->factor;
}

double LinkSlowdowns::CapacityAt(const Topology& topology, int32_t link, double t_s) const {
  return topology.link(link).capacity_bytes_per_s * FactorAt(link, t_s);
}

}  // namespace troupe::fabric
