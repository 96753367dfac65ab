#include "scheduling/fit_index.hpp"

#include <algorithm>

namespace troupe::scheduling {
namespace {

size_t WholeGroups(size_t nodes, size_t fanout) { return (nodes + fanout - 1) / fanout * fanout; }

}  // namespace

// With SSE2 a tree of four two-wide maxima rather than a chain of eight dependent compares (a
// changed node recomputes its group's most often).
double FitIndex::MostOfGroup(const double* values) {
  static_assert(kFanout == 8, "a group is four pairs");
#if defined(__SSE2__)
  const __m128d low = _mm_max_pd(_mm_loadu_pd(values), _mm_loadu_pd(values + 2));
  const __m128d high = _mm_max_pd(_mm_loadu_pd(values + 4), _mm_loadu_pd(values + 6));
  const __m128d both = _mm_max_pd(low, high);
  return _mm_cvtsd_f64(_mm_max_sd(both, _mm_unpackhi_pd(both, both)));
#else
  return *std::max_element(values, values + kFanout);
#endif
}

void FitIndex::Reset(const ClusterLedger& ledger) {
  stride_ = static_cast<size_t>(std::max(1, ledger.server_count()));
  const size_t positions = static_cast<size_t>(std::max(1, ledger.max_server_gpus())) * stride_;
  // Called every round: the levels keep their storage.
  size_t count = 0;
  for (size_t nodes = positions;; nodes = WholeGroups(nodes, kFanout) / kFanout) {
    const size_t padded = WholeGroups(nodes, kFanout);
    if (count == levels_.size()) levels_.emplace_back();
    levels_[count].cpus.assign(padded, -1);
    levels_[count].memory_gb.assign(padded, -1);
    ++count;
    if (nodes == 1) break;
  }
  levels_.resize(count);
  placed_.assign(ledger.server_count(), -1);
  fingers_ = {};
  updates_.clear();
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    const ServerShape& f = ledger.free(s);
    if (f.gpus <= 0) continue;
    placed_[s] = static_cast<int64_t>((f.gpus - 1) * stride_ + s);
    levels_[0].cpus[placed_[s]] = f.cpus;
    levels_[0].memory_gb[placed_[s]] = f.memory_gb;
  }
  for (size_t level = 1; level < levels_.size(); ++level) {
    const Level& below = levels_[level - 1];
    Level& here = levels_[level];
    for (size_t node = 0; node * kFanout < below.cpus.size(); ++node) {
      const size_t first = node * kFanout;
      here.cpus[node] = MostOfGroup(&below.cpus[first]);
      here.memory_gb[node] = MostOfGroup(&below.memory_gb[first]);
    }
  }
}

void FitIndex::Update(const ClusterLedger& ledger, int32_t server) {
  if (placed_[server] >= 0) Set(static_cast<size_t>(placed_[server]), -1, -1);
  const ServerShape& f = ledger.free(server);
  placed_[server] = f.gpus > 0 ? static_cast<int64_t>((f.gpus - 1) * stride_ + server) : -1;
  if (placed_[server] < 0) return;
  const auto position = static_cast<size_t>(placed_[server]);
  Set(position, f.cpus, f.memory_gb);
  updates_.push_back(position);
}

FitIndex::Finger& FitIndex::FingerFor(uint32_t question, size_t first_position) {
  for (Finger& finger : fingers_) {
    // A position below the question's first has too few GPUs free for it.
    if (finger.question == question) {
      finger.from = std::max(finger.from, first_position);
      return finger;
    }
  }
  Finger& finger = fingers_[next_finger_];
  next_finger_ = (next_finger_ + 1) % kFingers;
  finger = Finger{question, first_position, updates_.size()};
  return finger;
}

void FitIndex::Set(size_t position, double cpus, double memory_gb) {
  size_t node = position;
  for (size_t level = 0;; ++level) {
    Level& here = levels_[level];
    const double was_cpus = here.cpus[node], was_memory = here.memory_gb[node];
    here.cpus[node] = cpus;
    here.memory_gb[node] = memory_gb;
    if (level + 1 == levels_.size()) return;
    const size_t parent = node / kFanout;
    const Level& above = levels_[level + 1];
    const double before_cpus = above.cpus[parent], before_memory = above.memory_gb[parent];
    cpus = MostAfter(here.cpus, node, was_cpus, cpus, before_cpus);
    memory_gb = MostAfter(here.memory_gb, node, was_memory, memory_gb, before_memory);
    // Unchanged here: unchanged above.
    if (cpus == before_cpus && memory_gb == before_memory) return;
    node = parent;
  }
}

double FitIndex::MostAfter(const std::vector<double>& values, size_t node, double was, double now,
                           double before) {
  if (now >= before) return now;
  // The most is another node's, which did not change.
  if (was < before) return before;
  return MostOfGroup(&values[node / kFanout * kFanout]);
}

}  // namespace troupe::scheduling
