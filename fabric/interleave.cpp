// The unified circle as bins: each arc's bursts are laid over the window [0, perimeter) from its
// shift (the bursts that start before 0 or run past the end clipped), each bin holding the demand
// times the share of the bin the burst covers, so a burst shorter than a bin still counts in full.
#include "fabric/interleave.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <unordered_map>

namespace troupe::fabric {
namespace {

double Period(double compute_s, double burst_s) {
  return std::max(0.0, compute_s) + std::max(0.0, burst_s);
}

bool Sends(const Arc& arc) {
  return arc.burst_s > 0 && arc.demand > 0 && Period(arc.compute_s, arc.burst_s) > 0;
}

// The few turns of the longest period after which every period nearly repeats (within 2% of
// it), else kMaxTurns of them.
int32_t Turns(double longest_s, const std::vector<double>& periods) {
  for (int32_t turns = 1; turns <= kMaxTurns; ++turns) {
    const double window = turns * longest_s;
    const bool repeats = std::all_of(periods.begin(), periods.end(), [&](double t) {
      return std::abs(window - std::round(window / t) * t) <= 0.02 * t;
    });
    if (repeats) return turns;
  }
  return kMaxTurns;
}

struct Circle {
  double perimeter_s = 0;
  std::vector<double> load;  // bytes per second, by bin

  double bin_s() const { return perimeter_s / static_cast<double>(load.size()); }
};

// The circle of the sending arcs plus one arc of period `extra_period_s` (0: none).
Circle MakeCircle(const std::vector<Arc>& arcs, double extra_period_s) {
  std::vector<double> periods;
  for (const Arc& arc : arcs) {
    if (Sends(arc)) periods.push_back(Period(arc.compute_s, arc.burst_s));
  }
  if (extra_period_s > 0) periods.push_back(extra_period_s);
  Circle circle;
  if (periods.empty()) return circle;
  const double longest = *std::max_element(periods.begin(), periods.end());
  if (!std::isfinite(longest)) return circle;  // an iteration that never ends: nothing to lay out
  const int32_t turns = Turns(longest, periods);
  circle.perimeter_s = turns * longest;
  circle.load.assign(static_cast<size_t>(turns * kBinsPerTurn), 0);
  return circle;
}

void AddArc(const Arc& arc, Circle* circle) {
  if (!Sends(arc) || circle->load.empty()) return;
  const double compute = std::max(0.0, arc.compute_s);
  const double burst = arc.burst_s;
  const double period = compute + burst;
  if (!(period > 0) || !std::isfinite(period)) return;
  if (period < circle->bin_s()) {  // many bursts a bin: each bin carries their mean
    for (double& load : circle->load) load += arc.demand * burst / period;
    return;
  }
  const double shift = std::fmod(std::fmod(arc.shift_s, period) + period, period);
  const double bin = circle->bin_s();
  const auto bins = static_cast<int64_t>(circle->load.size());
  // The first burst that may reach into the window starts one period before it.
  for (double start = shift + compute - period; start < circle->perimeter_s; start += period) {
    const double from = std::max(0.0, start);
    const double to = std::min(circle->perimeter_s, start + burst);
    if (to <= from) continue;
    const int64_t first = std::min(bins - 1, static_cast<int64_t>(from / bin));
    const int64_t last = std::min(bins - 1, static_cast<int64_t>(to / bin));
    for (int64_t b = first; b <= last; ++b) {
      const double lo = std::max(from, static_cast<double>(b) * bin);
      const double hi = std::min(to, static_cast<double>(b + 1) * bin);
      if (hi > lo) circle->load[b] += arc.demand * (hi - lo) / bin;
    }
  }
}

double Score(double capacity, const std::vector<double>& load) {
  // Bursts that exactly fill the link sum to its capacity give or take a rounding error.
  const double limit = capacity * (1 + 1e-9);
  double excess = 0, total = 0;
  for (double d : load) {
    excess += std::max(0.0, d - limit);
    total += d;
  }
  return total > 0 ? 1 - excess / total : 1;
}

}  // namespace

double LinkScore(double capacity, const std::vector<Arc>& arcs) {
  Circle circle = MakeCircle(arcs, 0);
  for (const Arc& arc : arcs) AddArc(arc, &circle);
  return Score(capacity, circle.load);
}

ShiftChoice BestShift(double compute_s, double burst_s, const std::vector<LinkShare>& links) {
  const double period = Period(compute_s, burst_s);
  std::vector<const LinkShare*> shared;
  std::vector<Circle> bases;
  for (const LinkShare& link : links) {
    if (link.others.empty()) continue;
    Circle base = MakeCircle(link.others, period);
    for (const Arc& arc : link.others) AddArc(arc, &base);
    shared.push_back(&link);
    bases.push_back(std::move(base));
  }
  ShiftChoice best;
  if (shared.empty() || !(period > 0)) return best;
  best.score = -1;
  Circle trial;
  for (int32_t k = 0; k < kRotations; ++k) {
    const double shift = period * k / kRotations;
    double sum = 0;
    for (size_t l = 0; l < shared.size(); ++l) {
      trial = bases[l];
      AddArc(Arc{compute_s, burst_s, shared[l]->demand, shift}, &trial);
      sum += Score(shared[l]->capacity, trial.load);
    }
    const double mean = sum / static_cast<double>(shared.size());
    if (mean > best.score + 1e-12) best = ShiftChoice{mean, shift};
  }
  return best;
}

double MeanScoreAt(double compute_s, double burst_s, double shift_s,
                   const std::vector<LinkShare>& links) {
  double sum = 0;
  int32_t shared = 0;
  for (const LinkShare& link : links) {
    if (link.others.empty()) continue;
    std::vector<Arc> arcs = link.others;
    arcs.push_back(Arc{compute_s, burst_s, link.demand, shift_s});
    sum += LinkScore(link.capacity, arcs);
    ++shared;
  }
  return shared > 0 ? sum / shared : 1;
}

namespace {

// The job's links beside the jobs on them that have a shift.
std::vector<LinkShare> SharesOf(const std::vector<double>& capacities,
                                const std::vector<CycleJob>& jobs,
                                const std::unordered_map<int32_t, std::vector<size_t>>& on_link,
                                size_t job) {
  std::vector<LinkShare> shares;
  for (const auto& [link, demand] : jobs[job].link_demand) {
    LinkShare share{.capacity = capacities[link], .demand = demand, .others = {}};
    for (size_t other : on_link.at(link)) {
      const CycleJob& o = jobs[other];
      if (other == job || o.shift_s < 0) continue;
      for (const auto& [l, d] : o.link_demand) {
        if (l == link) share.others.push_back(Arc{o.compute_s, o.burst_s, d, o.shift_s});
      }
    }
    shares.push_back(std::move(share));
  }
  return shares;
}

}  // namespace

void AssignShifts(const std::vector<double>& capacities, std::vector<CycleJob>* jobs_in) {
  std::vector<CycleJob>& jobs = *jobs_in;
  std::unordered_map<int32_t, std::vector<size_t>> on_link;
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (const auto& [link, demand] : jobs[j].link_demand) on_link[link].push_back(j);
  }
  std::vector<bool> reached(jobs.size(), false);
  std::deque<size_t> frontier;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (jobs[j].shift_s >= 0) {
      reached[j] = true;
      frontier.push_back(j);
    }
  }
  for (size_t seed = 0; seed <= jobs.size(); ++seed) {
    while (!frontier.empty()) {
      const size_t u = frontier.front();
      frontier.pop_front();
      for (const auto& [link, demand] : jobs[u].link_demand) {
        for (size_t v : on_link[link]) {
          if (reached[v]) continue;
          reached[v] = true;
          const std::vector<LinkShare> shares = SharesOf(capacities, jobs, on_link, v);
          jobs[v].shift_s = BestShift(jobs[v].compute_s, jobs[v].burst_s, shares).shift_s;
          frontier.push_back(v);
        }
      }
    }
    // A component no shifted job reaches starts from its first job, at 0.
    if (seed < jobs.size() && !reached[seed]) {
      reached[seed] = true;
      jobs[seed].shift_s = 0;
      frontier.push_back(seed);
    }
  }
}

}  // namespace troupe::fabric
