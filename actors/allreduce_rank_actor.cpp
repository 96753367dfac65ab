#include "actors/allreduce_rank_actor.hpp"

#include <caf/sec.hpp>
#include <span>
#include <utility>
#include <variant>

#include "messages/fabric_messages.hpp"
#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

using RankSelf = caf::stateful_actor<AllReduceRankState>;

// This rank's parts on their way to one owner whose sums have not come back: enough to keep a
// connection busy while the owner adds, few enough that the middleman's buffers stay a few
// segments long (sent all at once, a 256 MiB buffer's parts could grow them to 170 MiB per
// process).
constexpr int kPartsInFlight = 8;

std::span<float> SliceOf(AllReduceRound& round, const gpu::ReductionSegment& segment) {
  return std::span<float>(round.values.get(), round.length)
      .subspan(static_cast<size_t>(segment.offset), static_cast<size_t>(segment.length));
}

FloatBlob ShareOf(const AllReduceRound& round, const gpu::ReductionSegment& segment) {
  return FloatBlob::Share(round.values, static_cast<size_t>(segment.offset),
                          static_cast<size_t>(segment.length));
}

bool Fits(const AllReduceRound& round, int32_t s, const FloatBlob& blob) {
  return s >= 0 && static_cast<size_t>(s) < round.plan.size() && blob.whole() &&
         blob.floats() == static_cast<size_t>(round.plan[static_cast<size_t>(s)].length);
}

// Whether a message to rank `to` crosses the fabric: there is one, and `to` is on another server.
bool Crosses(const AllReduceRankState& st, int32_t to) {
  return st.fabric && st.servers.size() == st.ranks.size() &&
         st.servers[static_cast<size_t>(to)] != st.servers[static_cast<size_t>(st.rank)];
}

// Sends a part or a sum to rank `to`: at once, or, across the fabric, once its flow is through.
template <class Message>
void SendToRank(RankSelf* self, int32_t to, Message message) {
  AllReduceRankState& st = self->state;
  if (!Crosses(st, to)) {
    Tell(self, st.telemetry, st.ranks[static_cast<size_t>(to)], std::move(message));
    return;
  }
  const int64_t key = st.next_flow++;
  const double bytes = static_cast<double>(message.values.floats() * sizeof(float));
  ++st.rounds[message.round].paced;
  st.paced.emplace(key, PacedSend{to, std::move(message)});
  Tell(self, st.telemetry, st.fabric,
       FlowStart{.key = key,
                 .from_server = st.servers[static_cast<size_t>(st.rank)],
                 .to_server = st.servers[static_cast<size_t>(to)],
                 .bytes = bytes});
}

void Finish(RankSelf* self, int64_t id) {
  AllReduceRound& round = self->state.rounds[id];
  if (!round.started || round.sums_missing > 0 || round.paced > 0) return;
  // The sum leaves as the round's own buffer: a requester in this process gets it without a copy.
  round.reply.deliver(AllReduceResult{id, FloatBlob::Share(round.values, 0, round.length)});
  self->state.rounds.erase(id);
}

void Fail(RankSelf* self, int64_t id) {
  self->state.rounds[id].reply.deliver(caf::make_error(caf::sec::invalid_argument));
  self->state.rounds.erase(id);
}

// Adds segment s once all N contributions are in, in place of this rank's own (a view of the same
// floats), and sends the sum to every other rank as a view of it: it never changes again.
void TryReduce(RankSelf* self, int64_t id, int32_t s) {
  AllReduceRankState& st = self->state;
  AllReduceRound& round = st.rounds[id];
  auto it = round.parts.find(s);
  if (!round.started || it == round.parts.end()) return;
  const gpu::ReductionSegment& segment = round.plan[static_cast<size_t>(s)];
  std::vector<std::span<const float>> contributions;
  for (const FloatBlob& part : it->second) {
    if (part.floats() != static_cast<size_t>(segment.length)) return;  // still missing (or wrong)
    contributions.push_back(part.values());
  }
  gpu::AddInRankOrder(contributions, SliceOf(round, segment));
  round.parts.erase(it);
  for (int32_t r = 0; r < static_cast<int32_t>(st.ranks.size()); ++r) {
    if (r != st.rank) SendToRank(self, r, AllReduceSum{id, s, ShareOf(round, segment)});
  }
  --round.sums_missing;
  Finish(self, id);
}

// Keeps one contribution; false when it cannot belong to the round (a bad length or index).
bool Keep(AllReduceRound& round, int32_t ranks, int32_t from, int32_t s, FloatBlob part) {
  if (from < 0 || from >= ranks || s < 0 || !part.whole()) return false;
  if (round.started && !Fits(round, s, part)) return false;
  std::vector<FloatBlob>& parts = round.parts[s];
  parts.resize(static_cast<size_t>(ranks));
  parts[static_cast<size_t>(from)] = std::move(part);
  return true;
}

// Sends this rank's next part for `owner`'s segments, if one is left.
void SendNextPart(RankSelf* self, int64_t id, AllReduceRound& round, int32_t owner) {
  AllReduceRankState& st = self->state;
  const std::vector<int32_t>& unsent = round.unsent[static_cast<size_t>(owner)];
  size_t& sent = round.sent[static_cast<size_t>(owner)];
  if (sent >= unsent.size()) return;
  const int32_t s = unsent[sent++];
  SendToRank(self, owner,
             AllReducePart{id, st.rank, s, ShareOf(round, round.plan[static_cast<size_t>(s)])});
}

// Keeps this rank's contributions to its own segments and sends the first kPartsInFlight parts
// to every other owner, the owners' k-th segments one after another, so every connection has
// work from the first message on. Each sum that comes back sends the next part to its owner.
bool SendParts(RankSelf* self, int64_t id, AllReduceRound& round) {
  AllReduceRankState& st = self->state;
  const int32_t ranks = static_cast<int32_t>(st.ranks.size());
  round.unsent.assign(static_cast<size_t>(ranks), {});
  round.sent.assign(static_cast<size_t>(ranks), 0);
  for (int32_t s = 0; s < static_cast<int32_t>(round.plan.size()); ++s) {
    const gpu::ReductionSegment& segment = round.plan[static_cast<size_t>(s)];
    if (segment.owner != st.rank) {
      round.unsent[static_cast<size_t>(segment.owner)].push_back(s);
    } else if (!Keep(round, ranks, st.rank, s, ShareOf(round, segment))) {
      return false;
    }
  }
  for (int k = 0; k < kPartsInFlight; ++k) {
    for (int32_t owner = 0; owner < ranks; ++owner) SendNextPart(self, id, round, owner);
  }
  return true;
}

void Start(RankSelf* self, AllReduceStart& start) {
  AllReduceRankState& st = self->state;
  AllReduceRound& round = st.rounds[start.round];
  round.reply = self->make_response_promise();
  round.length = start.values.floats();
  round.values = std::move(start.values).TakeWritable();
  round.plan = gpu::PlanReduction(static_cast<int64_t>(round.length),
                                  static_cast<int32_t>(st.ranks.size()), st.segment_floats);
  round.sums_missing = static_cast<int64_t>(round.plan.size());
  round.started = true;
  if (!SendParts(self, start.round, round)) return Fail(self, start.round);
  for (auto& [s, sum] : std::exchange(round.early_sums, {})) {
    if (!Fits(round, s, sum)) return Fail(self, start.round);
    sum.CopyTo(SliceOf(round, round.plan[static_cast<size_t>(s)]));
    --round.sums_missing;
    SendNextPart(self, start.round, round, round.plan[static_cast<size_t>(s)].owner);
  }
  // Parts that came before the start: check their lengths now, then add what is complete.
  for (auto& [s, parts] : round.parts) {
    for (const FloatBlob& part : parts) {
      const bool missing = part.floats() == 0 && part.whole();
      if (!missing && !Fits(round, s, part)) return Fail(self, start.round);
    }
  }
  std::vector<int32_t> owned;
  for (const auto& entry : round.parts) owned.push_back(entry.first);
  for (int32_t s : owned) TryReduce(self, start.round, s);
  Finish(self, start.round);
}

void OnPart(RankSelf* self, AllReducePart& part) {
  AllReduceRankState& st = self->state;
  if (st.ranks.empty()) {
    st.before_group.push_back(std::move(part));
    return;
  }
  AllReduceRound& round = st.rounds[part.round];
  if (!Keep(round, static_cast<int32_t>(st.ranks.size()), part.from, part.segment,
            std::move(part.values))) {
    if (round.started) Fail(self, part.round);
    return;
  }
  TryReduce(self, part.round, part.segment);
}

// The fabric carried a paced message's bytes: it leaves now, and its round may be answered.
void OnFlowDone(RankSelf* self, const FlowDone& done) {
  AllReduceRankState& st = self->state;
  auto it = st.paced.find(done.key);
  if (it == st.paced.end()) return;
  const caf::actor& to = st.ranks[static_cast<size_t>(it->second.to)];
  int64_t id = 0;
  std::visit(
      [&](auto& message) {
        id = message.round;
        Tell(self, st.telemetry, to, std::move(message));
      },
      it->second.message);
  st.paced.erase(it);
  auto round = st.rounds.find(id);
  if (round == st.rounds.end()) return;
  --round->second.paced;
  Finish(self, id);
}

void OnSum(RankSelf* self, AllReduceSum& sum) {
  AllReduceRound& round = self->state.rounds[sum.round];
  if (!round.started) {
    round.early_sums[sum.segment] = std::move(sum.values);
    return;
  }
  if (!Fits(round, sum.segment, sum.values)) return Fail(self, sum.round);
  const gpu::ReductionSegment& segment = round.plan[static_cast<size_t>(sum.segment)];
  sum.values.CopyTo(SliceOf(round, segment));
  --round.sums_missing;
  SendNextPart(self, sum.round, round, segment.owner);
  Finish(self, sum.round);
}

}  // namespace

caf::behavior AllReduceRankActor(RankSelf* self, Telemetry* telemetry) {
  self->state.telemetry = telemetry;
  return {
      [=](AllReduceGroup& group) {
        self->state.rank = group.rank;
        self->state.ranks = std::move(group.ranks);
        self->state.segment_floats = std::max<int64_t>(1, group.segment_floats);
        self->state.fabric = std::move(group.fabric);
        self->state.servers = std::move(group.servers);
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
      [=](AllReduceSum& sum) { OnSum(self, sum); },
      [=](const FlowDone& done) { OnFlowDone(self, done); },
  };
}

}  // namespace troupe
