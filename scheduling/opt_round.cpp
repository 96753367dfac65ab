#include "scheduling/opt_round.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace troupe::scheduling::opt_detail {
namespace {

// Room for LP 2's rounding errors when a point is compared with what it may use.
constexpr double kFitSlack = 1e-7;

// What each server has spare, CPUs and memory, beyond what is planned.
struct Spare {
  std::vector<double> cpus;
  std::vector<double> memory_gb;
};

double FairFloor(const OptJob& r) {
  return r.fair.value - 1e-9 * std::max(1.0, std::fabs(r.fair.value));
}

// Gives the job's planned CPUs and memory back to its servers; returns the totals.
GridPoint Release(OptJob& r, Spare& spare) {
  GridPoint had{0, 0, r.value};
  for (PlacementPart& p : r.parts) {
    spare.cpus[p.server] += p.cpus;
    spare.memory_gb[p.server] += p.memory_gb;
    had.cpus += p.cpus;
    had.memory_gb += p.memory_gb;
    p.cpus = p.memory_gb = 0;
  }
  return had;
}

// The fastest candidate at or above the fair value whose totals fit in (cpus, memory_gb); the
// first such in grid order (the cheapest) on a tie; nullptr if none fits.
const GridPoint* BestWithin(const OptJob& r, double cpus, double memory_gb) {
  const GridPoint* best = nullptr;
  const auto consider = [&](const GridPoint& q) {
    if (q.value < FairFloor(r)) return;
    if (q.cpus * r.gpus > cpus + kFitSlack || q.memory_gb * r.gpus > memory_gb + kFitSlack) return;
    if (best == nullptr || q.value > best->value) best = &q;
  };
  for (const GridPoint& q : *r.points) consider(q);
  consider(r.fair);
  return best;
}

// Spare capacity over the job's servers (its parts are on distinct servers).
GridPoint SpareOf(const OptJob& r, const Spare& spare) {
  GridPoint room{0, 0, 0};
  for (const PlacementPart& p : r.parts) {
    room.cpus += std::max(0.0, spare.cpus[p.server]);
    room.memory_gb += std::max(0.0, spare.memory_gb[p.server]);
  }
  return room;
}

// Plans `per_gpu` x the job's GPUs of one resource on its parts: each part its GPUs' share as far
// as its server's spare allows, then the rest wherever there is spare; what rounding leaves over
// goes to the last part (the lease cuts it to what is free).
void Spread(double per_gpu, PlacementParts& parts, double PlacementPart::*amount,
            std::vector<double>& spare) {
  double left = 0;
  for (PlacementPart& p : parts) {
    p.*amount = std::clamp(spare[p.server], 0.0, per_gpu * p.gpus);
    left += per_gpu * p.gpus - p.*amount;
    spare[p.server] -= p.*amount;
  }
  for (PlacementPart& p : parts) {
    const double more = std::clamp(spare[p.server], 0.0, left);
    p.*amount += more;
    spare[p.server] -= more;
    left -= more;
  }
  parts.back().*amount += left;
  spare[parts.back().server] -= left;
}

void Assign(OptJob& r, const GridPoint& q, Spare& spare) {
  Spread(q.cpus, r.parts, &PlacementPart::cpus, spare.cpus);
  Spread(q.memory_gb, r.parts, &PlacementPart::memory_gb, spare.memory_gb);
  r.value = q.value;
  r.rounded = true;
}

// Moves the job to the best candidate within its own allotment, plus its servers' spare
// capacity when `use_spare`; leaves it as it was and returns false if none is at its fair value.
bool Repick(OptJob& r, Spare& spare, bool use_spare) {
  const PlacementParts before = r.parts;
  const GridPoint had = Release(r, spare);
  const GridPoint room = use_spare ? SpareOf(r, spare) : had;  // the spare includes what it had
  const GridPoint* best = BestWithin(r, room.cpus, room.memory_gb);
  if (best != nullptr) {
    Assign(r, *best, spare);
    return true;
  }
  r.parts = before;
  for (const PlacementPart& p : r.parts) {
    spare.cpus[p.server] -= p.cpus;
    spare.memory_gb[p.server] -= p.memory_gb;
  }
  return false;
}

// What a job has planned, totals.
GridPoint Had(const OptJob& r) {
  GridPoint had{0, 0, r.value};
  for (const PlacementPart& p : r.parts) {
    had.cpus += p.cpus;
    had.memory_gb += p.memory_gb;
  }
  return had;
}

// Of the job's candidates at or above its fair value that need no more than it has, the one
// that needs least of what is short (weights: 1 for a short resource, 0 otherwise, per GPU).
const GridPoint* Leanest(const OptJob& r, const GridPoint& had, const GridPoint& shortage) {
  const auto weight = [&](const GridPoint& q) {
    return shortage.cpus * q.cpus / std::max(had.cpus, 1e-9) +
           shortage.memory_gb * q.memory_gb / std::max(had.memory_gb, 1e-9);
  };
  const GridPoint* leanest = nullptr;
  const auto consider = [&](const GridPoint& q) {
    if (q.value < FairFloor(r) || q.cpus * r.gpus > had.cpus + kFitSlack ||
        q.memory_gb * r.gpus > had.memory_gb + kFitSlack) {
      return;
    }
    if (leanest == nullptr || weight(q) < weight(*leanest)) leanest = &q;
  };
  for (const GridPoint& q : *r.points) consider(q);
  consider(r.fair);
  return leanest;
}

// Moves every other placed job on the job's servers to its leanest candidate in what the job
// lacks for its proportional point (the last passes let them grow again), then retries the job
// with its servers' spare capacity.
bool Squeeze(std::vector<OptJob>& jobs, OptJob& r, Spare& spare) {
  const GridPoint room = SpareOf(r, spare);
  const GridPoint shortage{r.fair.cpus * r.gpus > room.cpus ? 1.0 : 0.0,
                           r.fair.memory_gb * r.gpus > room.memory_gb ? 1.0 : 0.0, 0};
  for (OptJob& other : jobs) {
    if (&other == &r || !other.rounded) continue;
    const bool shares = std::any_of(other.parts.begin(), other.parts.end(), [&](const auto& p) {
      return std::any_of(r.parts.begin(), r.parts.end(),
                         [&](const auto& q) { return q.server == p.server; });
    });
    if (!shares) continue;
    const GridPoint* lean = Leanest(other, Had(other), shortage);
    if (lean == nullptr) continue;
    Release(other, spare);
    Assign(other, *lean, spare);
  }
  return Repick(r, spare, true);
}

// Servers joined by spread jobs: a job's servers all lie in one component.
int32_t Root(std::vector<int32_t>& parent, int32_t s) {
  while (parent[s] != s) s = parent[s] = parent[parent[s]];
  return s;
}

// Puts every job of the component at its proportional share, part by part: that always fits,
// since the component's servers then hold nothing else. Returns how many jobs it moved.
int ResetComponent(std::vector<OptJob>& jobs, std::vector<int32_t>& parent, int32_t root,
                   const ClusterLedger& ledger, Spare& spare) {
  std::vector<OptJob*> members;
  for (OptJob& r : jobs) {
    if (Root(parent, r.parts.front().server) == root) members.push_back(&r);
  }
  for (OptJob* r : members) Release(*r, spare);
  for (OptJob* r : members) {
    for (PlacementPart& p : r->parts) {
      p.cpus = ledger.ProportionalCpus(p.server, p.gpus);
      p.memory_gb = ledger.ProportionalMemoryGb(p.server, p.gpus);
      spare.cpus[p.server] -= p.cpus;
      spare.memory_gb[p.server] -= p.memory_gb;
    }
    r->value = r->fair.value;
    r->rounded = true;
  }
  return static_cast<int>(members.size());
}

}  // namespace

int RoundToPoints(std::vector<OptJob>& jobs, const ClusterLedger& ledger) {
  Spare spare;
  std::vector<int32_t> parent(ledger.server_count());
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    spare.cpus.push_back(std::max(0.0, ledger.free(s).cpus));
    spare.memory_gb.push_back(std::max(0.0, ledger.free(s).memory_gb));
    parent[s] = s;
  }
  for (const OptJob& r : jobs) {
    for (const PlacementPart& p : r.parts) {
      spare.cpus[p.server] -= p.cpus;
      spare.memory_gb[p.server] -= p.memory_gb;
      parent[Root(parent, p.server)] = Root(parent, r.parts.front().server);
    }
  }
  std::vector<OptJob*> unplaced;
  for (OptJob& r : jobs) {
    r.rounded = r.mix_points <= 1;
    if (r.mix_points > 1 && !Repick(r, spare, false)) unplaced.push_back(&r);
  }
  int reset = 0;
  for (OptJob* r : unplaced) {
    if (r->rounded || Repick(*r, spare, true) || Squeeze(jobs, *r, spare)) continue;
    reset += ResetComponent(jobs, parent, Root(parent, r->parts.front().server), ledger, spare);
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (OptJob& r : jobs) Repick(r, spare, true);  // never worse: its own point still fits
  }
  return reset;
}

namespace {

// The fastest point of the matrix with at most (cpus, memory_gb) per GPU, fewest resources
// (relative to the proportional point) among the fastest. A bilinear cell peaks at a corner, so
// the grid points in the box, the box's corner and the grid lines' crossings of its edges are
// all that need trying.
GridPoint FastestWithin(const OptJob& r, double cpus, double memory_gb) {
  const SensitivityMatrix& w = *r.matrix;
  std::vector<double> cs = {cpus}, ms = {memory_gb};
  for (double c : w.cpu_grid) {
    if (c < cpus) cs.push_back(c);
  }
  for (double m : w.memory_grid) {
    if (m < memory_gb) ms.push_back(m);
  }
  const auto cost = [&](double c, double m) {
    return c / std::max(r.fair.cpus, 1e-9) + m / std::max(r.fair.memory_gb, 1e-9);
  };
  GridPoint best{0, 0, -std::numeric_limits<double>::infinity()};
  for (double c : cs) {
    for (double m : ms) {
      const double v = w.At(c, m);
      if (v > best.value + 1e-12 ||
          (v >= best.value - 1e-12 && cost(c, m) < cost(best.cpus, best.memory_gb))) {
        best = {c, m, v};
      }
    }
  }
  return best;
}

}  // namespace

void TopUp(std::vector<OptJob>& jobs, const ClusterLedger& ledger) {
  Spare spare;
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    spare.cpus.push_back(std::max(0.0, ledger.free(s).cpus));
    spare.memory_gb.push_back(std::max(0.0, ledger.free(s).memory_gb));
  }
  for (const OptJob& r : jobs) {
    for (const PlacementPart& p : r.parts) {
      spare.cpus[p.server] -= p.cpus;
      spare.memory_gb[p.server] -= p.memory_gb;
    }
  }
  for (OptJob& r : jobs) {
    if (r.matrix == nullptr) continue;
    const PlacementParts before = r.parts;
    const double value = r.value;
    Release(r, spare);
    const GridPoint room = SpareOf(r, spare);
    const GridPoint best = FastestWithin(r, room.cpus / r.gpus, room.memory_gb / r.gpus);
    if (best.value > value + 1e-12) {
      Assign(r, best, spare);
      continue;
    }
    r.parts = before;  // nothing faster: keep what it had
    for (const PlacementPart& p : r.parts) {
      spare.cpus[p.server] -= p.cpus;
      spare.memory_gb[p.server] -= p.memory_gb;
    }
  }
}

}  // namespace troupe::scheduling::opt_detail
