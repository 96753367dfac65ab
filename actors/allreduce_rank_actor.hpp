// The all-reduce rank: one member of an all-reduce among actors (messages/allreduce_messages.hpp),
// the reference implementation of a collective across troupe processes. A `troupe node` spawns one
// on request (spawn_rank_atom); in one process any code may spawn them.
//
// Protocol of one round, at rank r of N (after AllReduceGroup told it its rank and peers):
//   - AllReduceStart{round, values} (a request): r cuts values by PlanReduction, keeps its
//     contributions to the segments it owns and sends each other segment to its owner
//     (AllReducePart), paced: at most kPartsInFlight parts to one owner whose sums are still out,
//     the next one when a sum comes back. Parts are views of r's buffer (FloatBlob::Share); r sums
//     in that buffer when no one else holds it, so a round copies no float it does not send.
//   - An owner that holds all N contributions of a segment adds them in rank order
//     (AddInRankOrder: the float operations of the single-process reference, so the sum is bit
//     for bit the reference's whatever order messages arrived in) and sends the sum to every
//     other rank (AllReduceSum).
//   - Once r holds every segment's sum (and, with a fabric, has sent all it had to) it answers
//     the request with AllReduceResult{round, sum}.
// Parts and sums of a round r has not started yet (a faster peer), and parts that arrive before
// r's own AllReduceGroup, are kept until they can be placed.
// Contributions of the wrong length answer the request with sec::invalid_argument and drop the
// round. Every send goes through Tell (counted, faultable).
// With a fabric in the group (AllReduceGroup.fabric and .servers), a part or sum for a rank on
// another server waits for its flow: the rank tells the fabric FlowStart with the message's bytes
// and sends the message when FlowDone comes back (actors/fabric_actor.hpp). Without one, or
// between ranks of one server, messages leave at once.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <variant>
#include <vector>

#include "gpu/reduction_plan.hpp"
#include "messages/allreduce_messages.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

struct AllReduceRound {
  bool started = false;
  // This rank's contribution, overwritten segment by segment by sums; parts sent to owners are
  // views of it (FloatBlob::Share), read before their segment's sum can arrive.
  std::shared_ptr<float[]> values;
  size_t length = 0;
  std::vector<gpu::ReductionSegment> plan;
  int64_t sums_missing = 0;
  std::map<int32_t, std::vector<FloatBlob>> parts;  // owned segment -> by rank
  std::map<int32_t, FloatBlob> early_sums;          // arrived before the start
  std::vector<std::vector<int32_t>> unsent;  // by owner: the segments to send it, in plan order
  std::vector<size_t> sent;                  // by owner: how many of those went out
  // With a fabric: this rank's parts and sums still waiting for it. The round is answered only
  // once they are out, so a worker that stops after the round cannot take them down with it.
  int64_t paced = 0;
  caf::response_promise reply;
};

// A part or sum waiting for the fabric to carry its bytes to a rank on another server.
struct PacedSend {
  int32_t to = 0;
  std::variant<AllReducePart, AllReduceSum> message;
};

struct AllReduceRankState {
  int32_t rank = 0;
  std::vector<caf::actor> ranks;
  int64_t segment_floats = 1;
  Telemetry* telemetry = nullptr;
  caf::actor fabric;             // none: no fabric, every message leaves at once
  std::vector<int32_t> servers;  // by rank, with a fabric
  int64_t next_flow = 0;
  std::map<int64_t, PacedSend> paced;  // by flow key
  std::map<int64_t, AllReduceRound> rounds;
  // Parts from peers that had their AllReduceGroup before this rank had its own (messages from
  // different senders, across processes, may overtake each other).
  std::vector<AllReducePart> before_group;
  static inline const char* name = "troupe.allreduce.rank";
};

caf::behavior AllReduceRankActor(caf::stateful_actor<AllReduceRankState>* self,
                                 Telemetry* telemetry);

}  // namespace troupe
