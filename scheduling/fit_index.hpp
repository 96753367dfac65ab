// FitIndex: the best-fit search for a consolidated part — the first server in (free GPUs, index)
// order with enough free GPUs whose part at `demand` fits.
//
// Every server sits at one position of (free GPUs, index) order; a tree of fan-out 8 above the
// positions holds, per node, at least the most free CPUs and the most free memory below it. A
// search starts at the first position with enough free GPUs, walks up, and descends only into nodes
// that could hold a lower bound of the demand, so a round does not rescan full servers for every
// job. Eight children side by side are compared in one pass and share one cache line: a tree of
// 16,384 positions is five levels deep, where a binary one is fourteen. The tree holds floats no
// lower than the free amounts they stand for (a search only skips what cannot fit; whether a
// server fits is the ledger's word), so a group of eight is 64 bytes.
//
// A server that leaves a position clears it and lowers the nodes up to three levels above (512
// positions, whose lines the clearing brought in); the nodes higher up keep what it had, still an
// upper bound, until a search that descends into one finds nothing below it and lowers it to the
// most of its children. A server moves on every Take, most often from one free-GPU count to the
// next: two distant positions whose paths up meet near the root. (Lowering every level at once
// costs 2% more instructions on a round of the million-job stream; lowering none, 5% more.)
//
// A round asks the same questions over and over (jobs of one model and size): a search may name
// its question, and the next search for it picks up where that one stopped. The positions a
// search passed over hold no fit for the question and still hold none unless a server was updated
// into them since: so when few servers were updated since (jobs sorted by demand come one kind
// after another), the next search reads those (a job's server moves to fewer free GPUs, often
// where the next job fits) and walks on from where the last one stopped only when none of them
// fits; after more updates it walks afresh. "Few" is 16: reading an update costs a compare or a
// fit test, a fresh walk about as much as a few dozen of them (4, 8, 32 and 64 cost 2.5%, 1.2%,
// 1.7% and 3.4% more instructions on a round of the million-job stream, jobs in FIFO order).
//
// The caller calls Update after every Take or Give on a server; Reset after the ledger's Reset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/demand.hpp"

namespace troupe::scheduling {

class FitIndex {
 public:
  void Reset(const ClusterLedger& ledger);
  void Update(const ClusterLedger& ledger, int32_t server);

  // The best-fit server for a part of `gpus` GPUs at demand(server, gpus), or -1. `bound` must
  // be at most demand(s, gpus) on every server s. A `question` other than 0 names the search:
  // the caller promises that every search with it until the next Reset passes equal `gpus`,
  // `bound` and demands.
  template <class DemandFn>
  int32_t Find(const ClusterLedger& ledger, int32_t gpus, const AuxDemand& bound,
               const DemandFn& demand, uint32_t question = 0);

 private:
  static constexpr size_t kFanout = 8;
  static constexpr uint32_t kMostQuestions = 4096;  // a question past it asks afresh
  static constexpr size_t kMostUpdatesRead = 16;    // since a question's last search; else afresh
  // A search's bound as the tree compares it: floats no higher than the bound less the slack.
  struct Need {
    float cpus, memory_gb;
  };
  // Where a question's searches stand: no position below `from` holds a fit for it, but those in
  // updates_ from `seen` on.
  struct Finger {
    bool asked = false;
    size_t from = 0;
    size_t seen = 0;
    Need need{};  // of its bound, the same every time
  };
  // kFanout sibling nodes: the most free CPUs and memory below each; -1: no server below.
  struct alignas(64) Group {
    float cpus[kFanout];
    float memory_gb[kFanout];
  };
  // One level's nodes: node n is lane n % kFanout of group n / kFanout.
  struct Level {
    std::vector<Group> groups;
    size_t nodes() const { return groups.size() * kFanout; }
  };
  static Need NeedOf(const AuxDemand& bound);
  // Bit k: node first + k of `level` (first a multiple of kFanout) could hold `need`.
  static uint32_t Reaching(const Level& level, size_t first, const Need& need);
  static constexpr size_t kLevelsLoweredAtOnce = 3;
  // Puts a server's free amounts at `position` and raises the nodes above that hold less.
  void Raise(size_t position, float cpus, float memory_gb);
  // Empties `position` and lowers the nodes above it up to kLevelsLoweredAtOnce.
  void Clear(size_t position);
  // Lowers a node above kLevelsLoweredAtOnce to the most of its children (those below it are
  // kept exact by Clear and Raise).
  void Tighten(size_t level, size_t node);
  // The most of a group's kFanout values; of them with `lane`'s replaced by `now`.
  static float MostOfGroup(const float* group);
  static float MostWith(const float* group, size_t lane, float now);
  Finger& FingerFor(uint32_t question, size_t first_position, const AuxDemand& bound);
  // The server at the lowest position updated since the finger's last search that fits, or -1;
  // brings the finger up to date.
  template <class DemandFn>
  int32_t FitSinceLastSearch(Finger& finger, const ClusterLedger& ledger, int32_t gpus,
                             size_t first_position, const DemandFn& demand) const;
  template <class DemandFn>
  int32_t FindFrom(const ClusterLedger& ledger, size_t position, int32_t gpus, const Need& need,
                   const DemandFn& demand);
  template <class DemandFn>
  int32_t Descend(const ClusterLedger& ledger, size_t level, size_t node, int32_t gpus,
                  const Need& need, const DemandFn& demand);

  size_t stride_ = 1;            // positions per free-GPU count: the servers
  std::vector<Level> levels_;    // [0]: a position per (free GPUs, server); back(): the root
  std::vector<int64_t> placed_;  // per server: its position, or -1 with no GPU free
  // The positions servers were updated into, in order.
  struct Moved {
    size_t position;
    int32_t server;
  };
  std::vector<Moved> updates_;
  std::vector<Finger> fingers_;  // by question, up to the greatest asked since Reset
};

inline uint32_t FitIndex::Reaching(const Level& level, size_t first, const Need& need) {
  const Group& group = level.groups[first / kFanout];
#if defined(__SSE2__)
  // Four nodes a compare and no branch: which nodes reach is data the predictor cannot learn.
  static_assert(kFanout == 8, "a group is two quadruples");
  const __m128 want_cpus = _mm_set1_ps(need.cpus);
  const __m128 want_memory = _mm_set1_ps(need.memory_gb);
  const __m128 low = _mm_and_ps(_mm_cmpge_ps(_mm_load_ps(group.cpus), want_cpus),
                                _mm_cmpge_ps(_mm_load_ps(group.memory_gb), want_memory));
  const __m128 high = _mm_and_ps(_mm_cmpge_ps(_mm_load_ps(group.cpus + 4), want_cpus),
                                 _mm_cmpge_ps(_mm_load_ps(group.memory_gb + 4), want_memory));
  return static_cast<uint32_t>(_mm_movemask_ps(low)) | static_cast<uint32_t>(_mm_movemask_ps(high))
                                                           << 4;
#else
  uint32_t mask = 0;
  for (size_t k = 0; k < kFanout; ++k) {
    mask |=
        static_cast<uint32_t>((group.cpus[k] >= need.cpus) & (group.memory_gb[k] >= need.memory_gb))
        << k;
  }
  return mask;
#endif
}

template <class DemandFn>
int32_t FitIndex::Find(const ClusterLedger& ledger, int32_t gpus, const AuxDemand& bound,
                       const DemandFn& demand, uint32_t question) {
  if (gpus <= 0 || gpus > ledger.max_server_gpus()) return -1;
  const size_t first_position = static_cast<size_t>(gpus - 1) * stride_;
  if (question == 0 || question > kMostQuestions) {
    return FindFrom(ledger, first_position, gpus, NeedOf(bound), demand);
  }
  Finger& finger = FingerFor(question, first_position, bound);
  const int32_t updated_fit = FitSinceLastSearch(finger, ledger, gpus, first_position, demand);
  if (updated_fit >= 0) return updated_fit;  // it beats any at or past `from`
  const int32_t found = FindFrom(ledger, finger.from, gpus, finger.need, demand);
  finger.from = found >= 0 ? static_cast<size_t>(placed_[found]) : levels_[0].nodes();
  return found;
}

template <class DemandFn>
int32_t FitIndex::FitSinceLastSearch(Finger& finger, const ClusterLedger& ledger, int32_t gpus,
                                     size_t first_position, const DemandFn& demand) const {
  const size_t last = updates_.size();
  if (last - finger.seen > kMostUpdatesRead) {  // cheaper to walk the tree afresh
    finger.from = first_position;
    finger.seen = last;
    return -1;
  }
  // First, without a branch, which updates could hold the fit (whether one is skipped is data the
  // predictor cannot learn): enough GPUs free, not read by the walk from `from`, and still the
  // server's (where it went is a later update). Then, in order, a fit test for each of those
  // below the best fit so far.
  static_assert(kMostUpdatesRead <= 32, "one bit an update read");
  uint32_t candidates = 0;
  for (size_t k = finger.seen; k < last; ++k) {
    const auto [position, server] = updates_[k];
    const uint32_t live = static_cast<uint32_t>(position >= first_position) &
                          static_cast<uint32_t>(position < finger.from) &
                          static_cast<uint32_t>(placed_[server] == static_cast<int64_t>(position));
    candidates |= live << (k - finger.seen);
  }
  int32_t best = -1;
  size_t best_position = finger.from;
  for (; candidates != 0; candidates &= candidates - 1) {
    const auto [position, server] = updates_[finger.seen + __builtin_ctz(candidates)];
    if (position >= best_position) continue;
    const AuxDemand aux = demand(server, gpus);
    if (ledger.Fits(server, gpus, aux.cpus, aux.memory_gb)) {
      best = server;
      best_position = position;
    }
  }
  // Below the fit, every position was read or holds no fit: the next search walks from the fit.
  finger.from = best_position;
  finger.seen = last;
  return best;
}

template <class DemandFn>
int32_t FitIndex::FindFrom(const ClusterLedger& ledger, size_t position, int32_t gpus,
                           const Need& need, const DemandFn& demand) {
  // Up from `position`: at each level, the nodes right of the path.
  size_t node = position;
  for (size_t level = 0; level < levels_.size(); ++level) {
    const size_t first = node / kFanout * kFanout;
    if (first >= levels_[level].nodes()) break;
    uint32_t mask = Reaching(levels_[level], first, need) & (~0u << (node - first));
    for (; mask != 0; mask &= mask - 1) {
      const int32_t found = Descend(ledger, level, first + __builtin_ctz(mask), gpus, need, demand);
      if (found >= 0) return found;
    }
    node = node / kFanout + 1;
  }
  return -1;
}

template <class DemandFn>
int32_t FitIndex::Descend(const ClusterLedger& ledger, size_t level, size_t node, int32_t gpus,
                          const Need& need, const DemandFn& demand) {
  if (level == 0) {
    const auto server = static_cast<int32_t>(node % stride_);
    const AuxDemand aux = demand(server, gpus);
    return ledger.Fits(server, gpus, aux.cpus, aux.memory_gb) ? server : -1;
  }
  const size_t first = node * kFanout;
  for (uint32_t mask = Reaching(levels_[level - 1], first, need); mask != 0; mask &= mask - 1) {
    const int32_t found =
        Descend(ledger, level - 1, first + __builtin_ctz(mask), gpus, need, demand);
    if (found >= 0) return found;
  }
  if (level > kLevelsLoweredAtOnce) Tighten(level, node);
  return -1;
}

}  // namespace troupe::scheduling
