#include "actors/allreduce_rank_actor.hpp"

#include <caf/sec.hpp>
#include <span>
#include <utility>

#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

using Self = caf::stateful_actor<AllReduceRankState>;

std::span<float> SliceOf(AllReduceRound& round, const gpu::ReductionSegment& segment) {
  return std::span<float>(round.values)
      .subspan(static_cast<size_t>(segment.offset), static_cast<size_t>(segment.length));
}

void Finish(Self* self, int64_t id) {
  AllReduceRound& round = self->state.rounds[id];
  if (!round.started || round.sums_missing > 0) return;
  round.reply.deliver(AllReduceResult{id, FloatBlob::Of(round.values)});
  self->state.rounds.erase(id);
}

void Fail(Self* self, int64_t id) {
  self->state.rounds[id].reply.deliver(caf::make_error(caf::sec::invalid_argument));
  self->state.rounds.erase(id);
}

// Adds segment s once all N contributions are in, and sends the sum to every other rank.
void TryReduce(Self* self, int64_t id, int32_t s) {
  AllReduceRankState& st = self->state;
  AllReduceRound& round = st.rounds[id];
  auto it = round.parts.find(s);
  if (!round.started || it == round.parts.end()) return;
  const gpu::ReductionSegment& segment = round.plan[static_cast<size_t>(s)];
  std::vector<std::span<const float>> contributions;
  for (const std::vector<float>& part : it->second) {
    if (part.size() != static_cast<size_t>(segment.length)) return;  // still missing (or wrong)
    contributions.emplace_back(part);
  }
  std::span<float> sum = SliceOf(round, segment);
  gpu::AddInRankOrder(contributions, sum);
  round.parts.erase(it);
  for (int32_t r = 0; r < static_cast<int32_t>(st.ranks.size()); ++r) {
    if (r != st.rank) {
      Tell(self, st.telemetry, st.ranks[r], AllReduceSum{id, s, FloatBlob::Of(sum)});
    }
  }
  --round.sums_missing;
  Finish(self, id);
}

// Keeps one contribution; false when it cannot belong to the round (a bad length or index).
bool Keep(AllReduceRound& round, int32_t ranks, int32_t from, int32_t s, std::vector<float> part) {
  if (from < 0 || from >= ranks || s < 0) return false;
  if (round.started) {
    if (static_cast<size_t>(s) >= round.plan.size()) return false;
    if (part.size() != static_cast<size_t>(round.plan[static_cast<size_t>(s)].length)) return false;
  }
  std::vector<std::vector<float>>& parts = round.parts[s];
  parts.resize(static_cast<size_t>(ranks));
  parts[static_cast<size_t>(from)] = std::move(part);
  return true;
}

void Start(Self* self, AllReduceStart& start) {
  AllReduceRankState& st = self->state;
  AllReduceRound& round = st.rounds[start.round];
  round.reply = self->make_response_promise();
  round.values = start.values.ToFloats();
  round.plan = gpu::PlanReduction(static_cast<int64_t>(round.values.size()),
                                  static_cast<int32_t>(st.ranks.size()), st.segment_floats);
  round.sums_missing = static_cast<int64_t>(round.plan.size());
  round.started = true;
  const int32_t ranks = static_cast<int32_t>(st.ranks.size());
  for (int32_t s = 0; s < static_cast<int32_t>(round.plan.size()); ++s) {
    const gpu::ReductionSegment& segment = round.plan[static_cast<size_t>(s)];
    const std::span<float> mine = SliceOf(round, segment);
    if (segment.owner != st.rank) {
      Tell(self, st.telemetry, st.ranks[static_cast<size_t>(segment.owner)],
           AllReducePart{start.round, st.rank, s, FloatBlob::Of(mine)});
    } else if (!Keep(round, ranks, st.rank, s, std::vector<float>(mine.begin(), mine.end()))) {
      return Fail(self, start.round);
    }
  }
  for (auto& [s, sum] : std::exchange(round.early_sums, {})) {
    if (static_cast<size_t>(s) >= round.plan.size() || !sum.whole() ||
        sum.floats() != static_cast<size_t>(round.plan[static_cast<size_t>(s)].length)) {
      return Fail(self, start.round);
    }
    sum.CopyTo(SliceOf(round, round.plan[static_cast<size_t>(s)]));
    --round.sums_missing;
  }
  // Parts that came before the start: check their lengths now, then add what is complete.
  for (auto& [s, parts] : round.parts) {
    for (const std::vector<float>& part : parts) {
      const bool bad =
          static_cast<size_t>(s) >= round.plan.size() ||
          (!part.empty() &&
           part.size() != static_cast<size_t>(round.plan[static_cast<size_t>(s)].length));
      if (bad) return Fail(self, start.round);
    }
  }
  std::vector<int32_t> owned;
  for (const auto& entry : round.parts) owned.push_back(entry.first);
  for (int32_t s : owned) TryReduce(self, start.round, s);
  Finish(self, start.round);
}

void OnPart(Self* self, AllReducePart& part) {
  AllReduceRankState& st = self->state;
  if (st.ranks.empty()) {
    st.before_group.push_back(std::move(part));
    return;
  }
  AllReduceRound& round = st.rounds[part.round];
  if (!part.values.whole() || !Keep(round, static_cast<int32_t>(st.ranks.size()), part.from,
                                    part.segment, part.values.ToFloats())) {
    if (round.started) Fail(self, part.round);
    return;
  }
  TryReduce(self, part.round, part.segment);
}

}  // namespace

caf::behavior AllReduceRankActor(Self* self, Telemetry* telemetry) {
  self->state.telemetry = telemetry;
  return {
      [=](AllReduceGroup& group) {
        self->state.rank = group.rank;
        self->state.ranks = std::move(group.ranks);
        self->state.segment_floats = std::max<int64_t>(1, group.segment_floats);
        for (AllReducePart& part : std::exchange(self->state.before_group, {})) {
          OnPart(self, part);
        }
      },
      [=](AllReduceStart& start) -> caf::result<AllReduceResult> {
        auto it = self->state.rounds.find(start.round);
        if (self->state.ranks.empty() || (it != self->state.rounds.end() && it->second.started)) {
          return caf::make_error(caf::sec::invalid_argument);  // no group yet, or a round twice
        }
        Start(self, start);
        return caf::delegated<AllReduceResult>();
      },
      [=](AllReducePart& part) { OnPart(self, part); },
      [=](AllReduceSum& sum) {
        AllReduceRound& round = self->state.rounds[sum.round];
        if (!round.started) {
          round.early_sums[sum.segment] = std::move(sum.values);
          return;
        }
        const size_t s = static_cast<size_t>(sum.segment);
        if (s >= round.plan.size() || !sum.values.whole() ||
            sum.values.floats() != static_cast<size_t>(round.plan[s].length)) {
          return Fail(self, sum.round);
        }
        sum.values.CopyTo(SliceOf(round, round.plan[s]));
        --round.sums_missing;
        Finish(self, sum.round);
      },
  };
}

}  // namespace troupe
