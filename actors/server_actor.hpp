// The server actor: one machine's GPUs, CPUs and memory, and the leases on them.
//
// It receives a round's leases in one RoundLeases message (leases of earlier rounds have ended by
// then), grants each part to its job with the GPU indices it gets, and refuses — to the job and,
// with the reason, to the scheduler — any lease that would overcommit it. It also resizes and
// releases leases on request. It keeps no clock: lease ends come with the leases. A round's leases
// delivered twice (a `duplicate` fault) are applied once. A `slow` fault (SlowDown) makes it a
// straggler: its grants carry the speed factor until the fault ends. With real compute, a job
// sends it the work of its part (PartWork) and it spawns the part's compute worker in its own
// process (actors/compute_worker_actor.hpp): the steps run where the leased devices are.
#pragma once

#include <absl/container/inlined_vector.h>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <optional>

#include "messages/actor_interfaces.hpp"
#include "messages/cluster_messages.hpp"
#include "messages/fault_messages.hpp"
#include "messages/work_messages.hpp"
#include "runtime/telemetry.hpp"
#include "scheduling/server_ledger.hpp"

namespace troupe {

struct ServerState {
  ServerSpec spec;
  std::optional<ServerLedger> ledger;  // in the actor's own block
  Telemetry* telemetry = nullptr;
  int64_t refusals = 0;
  double last_round_start_s = -1;  // the latest round applied
  SlowDown slow;
  // A round's standing parts not held here at their size, booked after the round's expiries
  // (kept between rounds for its storage).
  absl::InlinedVector<const StandingPart*, 8> standing_to_book;
  static inline const char* name = "troupe.server";
};

// Its interface: server_actor (messages/actor_interfaces.hpp).
server_actor::behavior_type ServerActor(server_actor::stateful_pointer<ServerState> self,
                                        ServerSpec spec, Telemetry* telemetry);

}  // namespace troupe
