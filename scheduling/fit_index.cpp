#include "scheduling/fit_index.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace troupe::scheduling {
namespace {

size_t WholeGroups(size_t nodes, size_t fanout) { return (nodes + fanout - 1) / fanout * fanout; }

// A float on the side of `value` that keeps the tree's answers safe: a free amount no lower, a
// need no higher. A float is within 2^-24 of the double it rounds; a step of 2^-20 of it (and a
// tiny one for zero) clears that without a call into libm.
float FloatAtLeast(double value) {
  const auto f = static_cast<float>(value);
  return f + (std::fabs(f) * 0x1p-20f + 0x1p-100f);
}
float FloatAtMost(double value) {
  const auto f = static_cast<float>(value);
  return f - (std::fabs(f) * 0x1p-20f + 0x1p-100f);
}

}  // namespace

FitIndex::Need FitIndex::NeedOf(const AuxDemand& bound) {
  return Need{FloatAtMost(bound.cpus - kDemandSlack), FloatAtMost(bound.memory_gb - kDemandSlack)};
}

// With SSE a tree of maxima over four lanes rather than a chain of eight dependent compares.
#if defined(__SSE2__)
namespace {
float MostOfPair(__m128 low, __m128 high) {
  __m128 most = _mm_max_ps(low, high);
  most = _mm_max_ps(most, _mm_movehl_ps(most, most));
  return _mm_cvtss_f32(_mm_max_ss(most, _mm_shuffle_ps(most, most, 1)));
}
}  // namespace
#endif

float FitIndex::MostOfGroup(const float* values) {
  static_assert(kFanout == 8, "a group is two quadruples");
#if defined(__SSE2__)
  return MostOfPair(_mm_load_ps(values), _mm_load_ps(values + 4));
#else
  return *std::max_element(values, values + kFanout);
#endif
}

float FitIndex::MostWith(const float* values, size_t lane, float now) {
#if defined(__SSE2__)
  const __m128i lanes = _mm_setr_epi32(0, 1, 2, 3);
  const __m128i at = _mm_set1_epi32(static_cast<int>(lane));
  const __m128 in_low = _mm_castsi128_ps(_mm_cmpeq_epi32(lanes, at));
  const __m128 in_high =
      _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_add_epi32(lanes, _mm_set1_epi32(4)), at));
  const __m128 value = _mm_set1_ps(now);
  const __m128 low =
      _mm_or_ps(_mm_andnot_ps(in_low, _mm_load_ps(values)), _mm_and_ps(in_low, value));
  const __m128 high =
      _mm_or_ps(_mm_andnot_ps(in_high, _mm_load_ps(values + 4)), _mm_and_ps(in_high, value));
  return MostOfPair(low, high);
#else
  float most = now;
  for (size_t k = 0; k < kFanout; ++k) {
    if (k != lane) most = std::max(most, values[k]);
  }
  return most;
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
    Group empty;
    std::fill(std::begin(empty.cpus), std::end(empty.cpus), -1.0f);
    std::fill(std::begin(empty.memory_gb), std::end(empty.memory_gb), -1.0f);
    levels_[count].groups.assign(padded / kFanout, empty);
    ++count;
    if (nodes == 1) break;
  }
  levels_.resize(count);
  placed_.assign(ledger.server_count(), -1);
  fingers_.clear();
  updates_.clear();
  for (int32_t s = 0; s < ledger.server_count(); ++s) {
    const ServerShape& f = ledger.free(s);
    if (f.gpus <= 0) continue;
    placed_[s] = static_cast<int64_t>((f.gpus - 1) * stride_ + s);
    Group& group = levels_[0].groups[placed_[s] / kFanout];
    group.cpus[placed_[s] % kFanout] = FloatAtLeast(f.cpus);
    group.memory_gb[placed_[s] % kFanout] = FloatAtLeast(f.memory_gb);
  }
  for (size_t level = 1; level < levels_.size(); ++level) {
    const Level& below = levels_[level - 1];
    Level& here = levels_[level];
    for (size_t node = 0; node < below.groups.size(); ++node) {
      Group& group = here.groups[node / kFanout];
      group.cpus[node % kFanout] = MostOfGroup(below.groups[node].cpus);
      group.memory_gb[node % kFanout] = MostOfGroup(below.groups[node].memory_gb);
    }
  }
}

void FitIndex::Update(const ClusterLedger& ledger, int32_t server) {
  if (placed_[server] >= 0) Clear(static_cast<size_t>(placed_[server]));
  const ServerShape& f = ledger.free(server);
  placed_[server] = f.gpus > 0 ? static_cast<int64_t>((f.gpus - 1) * stride_ + server) : -1;
  if (placed_[server] < 0) return;
  const auto position = static_cast<size_t>(placed_[server]);
  Raise(position, FloatAtLeast(f.cpus), FloatAtLeast(f.memory_gb));
  updates_.push_back({position, server});
}

FitIndex::Finger& FitIndex::FingerFor(uint32_t question, size_t first_position,
                                      const AuxDemand& bound) {
  if (question >= fingers_.size()) fingers_.resize(question + 1);
  Finger& finger = fingers_[question];
  if (!finger.asked) {
    finger = Finger{true, first_position, updates_.size(), NeedOf(bound)};
  } else {
    // A position below the question's first has too few GPUs free for it.
    finger.from = std::max(finger.from, first_position);
  }
  return finger;
}

void FitIndex::Raise(size_t position, float cpus, float memory_gb) {
  Group& leaf = levels_[0].groups[position / kFanout];
  leaf.cpus[position % kFanout] = cpus;
  leaf.memory_gb[position % kFanout] = memory_gb;
  size_t node = position / kFanout;
  for (size_t level = 1; level < levels_.size(); ++level, node /= kFanout) {
    Group& here = levels_[level].groups[node / kFanout];
    float& most_cpus = here.cpus[node % kFanout];
    float& most_memory = here.memory_gb[node % kFanout];
    if (cpus <= most_cpus && memory_gb <= most_memory) return;  // and so every node above
    most_cpus = std::max(most_cpus, cpus);
    most_memory = std::max(most_memory, memory_gb);
  }
}

void FitIndex::Clear(size_t position) {
  float cpus = -1.0f, memory_gb = -1.0f;  // what `node` of `level` now holds
  size_t node = position;
  for (size_t level = 0;; ++level) {
    Group& here = levels_[level].groups[node / kFanout];
    const size_t lane = node % kFanout;
    if (level == kLevelsLoweredAtOnce || level + 1 == levels_.size()) {
      here.cpus[lane] = cpus;
      here.memory_gb[lane] = memory_gb;
      return;
    }
    // The group is read whole before `lane` is stored: a wide read of a line just written in
    // part waits for the write.
    const float most_cpus = MostWith(here.cpus, lane, cpus);
    const float most_memory = MostWith(here.memory_gb, lane, memory_gb);
    here.cpus[lane] = cpus;
    here.memory_gb[lane] = memory_gb;
    const size_t parent = node / kFanout;
    const Group& above = levels_[level + 1].groups[parent / kFanout];
    if (above.cpus[parent % kFanout] == most_cpus &&
        above.memory_gb[parent % kFanout] == most_memory) {
      return;  // the nodes above hold what they held
    }
    cpus = most_cpus;
    memory_gb = most_memory;
    node = parent;
  }
}

void FitIndex::Tighten(size_t level, size_t node) {
  const Group& children = levels_[level - 1].groups[node];
  Group& here = levels_[level].groups[node / kFanout];
  here.cpus[node % kFanout] = MostOfGroup(children.cpus);
  here.memory_gb[node % kFanout] = MostOfGroup(children.memory_gb);
}

}  // namespace troupe::scheduling
