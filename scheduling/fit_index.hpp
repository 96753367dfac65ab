// FitIndex: the best-fit search for a consolidated part — the first server in (free GPUs, index)
// order with enough free GPUs whose part at `demand` fits.
//
// Every server sits at one position of (free GPUs, index) order; a tree of fan-out 8 above the
// positions holds, per node, the most free CPUs and the most free memory below it. A search
// starts at the first position with enough free GPUs, walks up, and descends only into nodes
// that could hold a lower bound of the demand, so a round does not rescan full servers for every
// job. Eight children side by side are compared in one pass (and share cache lines): a tree of
// 16,384 positions is five levels deep, where a binary one is fourteen.
//
// Jobs of one kind come one after another in a round: a search may name its question, and the
// next search for it picks up where that one stopped. The positions a search passed over hold no
// fit for the question and still hold none unless a server was updated into them since: so the
// next search reads the positions servers were updated into since (a job's server moves to fewer
// free GPUs, often where the next job fits), and walks the tree only when none of them fits.
//
// The caller calls Update after every Take or Give on a server; Reset after the ledger's Reset.
#pragma once

#include <array>
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
  static constexpr size_t kFingers = 4;           // recent questions
  static constexpr size_t kMostUpdatesRead = 64;  // since a question's last search; else afresh
  // Where a question's searches stand: no position below `from` holds a fit for it, but those in
  // updates_ from `seen` on.
  struct Finger {
    uint32_t question = 0;  // 0: none
    size_t from = 0;
    size_t seen = 0;
  };
  // One level's nodes, padded to whole groups of kFanout; -1: no server below.
  struct Level {
    std::vector<double> cpus, memory_gb;
  };
  // Bit k: node first + k of `level` could hold `bound`.
  static uint32_t Reaching(const Level& level, size_t first, const AuxDemand& bound);
  void Set(size_t position, double cpus, double memory_gb);
  // The most of a group's kFanout values.
  static double MostOfGroup(const double* group);
  // The most of `values`' group of kFanout around `node`, which just went from `was` to `now`;
  // `before` was the group's most.
  static double MostAfter(const std::vector<double>& values, size_t node, double was, double now,
                          double before);
  Finger& FingerFor(uint32_t question, size_t first_position);
  // The server at the lowest position updated since the finger's last search that fits, or -1;
  // brings the finger up to date.
  template <class DemandFn>
  int32_t FitSinceLastSearch(Finger& finger, const ClusterLedger& ledger, int32_t gpus,
                             size_t first_position, const DemandFn& demand) const;
  template <class DemandFn>
  int32_t FindFrom(const ClusterLedger& ledger, size_t position, int32_t gpus,
                   const AuxDemand& bound, const DemandFn& demand) const;
  template <class DemandFn>
  int32_t Descend(const ClusterLedger& ledger, size_t level, size_t node, int32_t gpus,
                  const AuxDemand& bound, const DemandFn& demand) const;

  size_t stride_ = 1;            // positions per free-GPU count: the servers
  std::vector<Level> levels_;    // [0]: a position per (free GPUs, server); back(): the root
  std::vector<int64_t> placed_;  // per server: its position, or -1 with no GPU free
  std::vector<size_t> updates_;  // the positions servers were updated into, in order
  std::array<Finger, kFingers> fingers_{};
  size_t next_finger_ = 0;  // the one a new question takes
};

inline uint32_t FitIndex::Reaching(const Level& level, size_t first, const AuxDemand& bound) {
  const double* cpus = level.cpus.data() + first;
  const double* memory = level.memory_gb.data() + first;
  const double need_cpus = bound.cpus - kDemandSlack;
  const double need_memory = bound.memory_gb - kDemandSlack;
  uint32_t mask = 0;
#if defined(__SSE2__)
  // Two nodes a compare and no branch: which nodes reach is data the predictor cannot learn.
  const __m128d want_cpus = _mm_set1_pd(need_cpus);
  const __m128d want_memory = _mm_set1_pd(need_memory);
  for (size_t k = 0; k < kFanout; k += 2) {
    const __m128d both = _mm_and_pd(_mm_cmpge_pd(_mm_loadu_pd(cpus + k), want_cpus),
                                    _mm_cmpge_pd(_mm_loadu_pd(memory + k), want_memory));
    mask |= static_cast<uint32_t>(_mm_movemask_pd(both)) << k;
  }
#else
  for (size_t k = 0; k < kFanout; ++k) {
    mask |= static_cast<uint32_t>((cpus[k] >= need_cpus) & (memory[k] >= need_memory)) << k;
  }
#endif
  return mask;
}

template <class DemandFn>
int32_t FitIndex::Find(const ClusterLedger& ledger, int32_t gpus, const AuxDemand& bound,
                       const DemandFn& demand, uint32_t question) {
  if (gpus <= 0 || gpus > ledger.max_server_gpus()) return -1;
  const size_t first_position = static_cast<size_t>(gpus - 1) * stride_;
  if (question == 0) return FindFrom(ledger, first_position, gpus, bound, demand);
  Finger& finger = FingerFor(question, first_position);
  const int32_t updated_fit = FitSinceLastSearch(finger, ledger, gpus, first_position, demand);
  if (updated_fit >= 0) return updated_fit;  // it beats any at or past `from`
  const int32_t found = FindFrom(ledger, finger.from, gpus, bound, demand);
  finger.from = found >= 0 ? static_cast<size_t>(placed_[found]) : levels_[0].cpus.size();
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
  int32_t best = -1;
  size_t best_position = finger.from;
  for (size_t k = finger.seen; k < last; ++k) {
    const size_t position = updates_[k];
    const auto server = static_cast<int32_t>(position % stride_);
    // Skipped: too few GPUs free, read by the walk from `from` (or past a better fit), or no
    // longer the server's (where it went is a later update).
    if (position < first_position || position >= best_position ||
        placed_[server] != static_cast<int64_t>(position)) {
      continue;
    }
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
                           const AuxDemand& bound, const DemandFn& demand) const {
  // Up from `position`: at each level, the nodes right of the path.
  size_t node = position;
  for (size_t level = 0; level < levels_.size(); ++level) {
    const size_t first = node / kFanout * kFanout;
    if (first >= levels_[level].cpus.size()) break;
    uint32_t mask = Reaching(levels_[level], first, bound) & (~0u << (node - first));
    for (; mask != 0; mask &= mask - 1) {
      const int32_t found =
          Descend(ledger, level, first + __builtin_ctz(mask), gpus, bound, demand);
      if (found >= 0) return found;
    }
    node = node / kFanout + 1;
  }
  return -1;
}

template <class DemandFn>
int32_t FitIndex::Descend(const ClusterLedger& ledger, size_t level, size_t node, int32_t gpus,
                          const AuxDemand& bound, const DemandFn& demand) const {
  if (level == 0) {
    const auto server = static_cast<int32_t>(node % stride_);
    const AuxDemand aux = demand(server, gpus);
    return ledger.Fits(server, gpus, aux.cpus, aux.memory_gb) ? server : -1;
  }
  const size_t first = node * kFanout;
  for (uint32_t mask = Reaching(levels_[level - 1], first, bound); mask != 0; mask &= mask - 1) {
    const int32_t found =
        Descend(ledger, level - 1, first + __builtin_ctz(mask), gpus, bound, demand);
    if (found >= 0) return found;
  }
  return -1;
}

}  // namespace troupe::scheduling
