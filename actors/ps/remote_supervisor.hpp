// Watches the shards of a parameter-server run that live in `troupe node` processes
// (paramserver.hosts; docs/paramserver.md, "Across processes"). When a shard goes down for any
// reason but a normal exit (its process was killed: the middleman reports the broken
// connection), the supervisor connects to the node's address again (a new `troupe node` on the
// same port: a restarted process), asks it to host the shard's next incarnation, which recovers
// from the node's own SSD-PS, and tells every trainer and partitioner (PsShardRestarted) and the
// shard (PsStart), exactly as the fault injector does after an emulated crash; trainers and
// partitioners re-send what the shard had not acknowledged. Both events go to the collector as
// PsFaultRecords (crashed, restarted). A node that does not come back within ReconnectNode's
// patience (about 10 s, or 20 s when it keeps cutting the handshake) fails the run naming it.
//
// Trainers, readers and partitioners in node processes (paramserver.trainer_hosts) are watched
// too, but not restarted: a trainer's replica of the dense model and the steps in flight live
// only in its process. One that goes down for any reason but a normal exit fails the run at once
// with one line naming the node and its address (PsFailure), and so does a shard whose process
// also hosted a trainer.
//
// Reconnecting waits on the wall clock (runtime/remote_node.hpp): a short-lived helper with a
// thread of its own does that, and the supervisor stays an ordinary actor.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <string>
#include <vector>

#include "messages/ps_messages.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

struct PsRemoteSupervisorSetup {
  // What a restarted shard's node is sent (remote_shard.hpp's ShardSpawnOf); the supervisor sets
  // the shard, its incarnation and the virtual time.
  PsShardSpawn spawn;
  std::vector<std::string> hosts;       // by node; empty: shards in the run's process
  std::vector<std::string> feed_hosts;  // by node; empty: trainers and feeds in the run's process
  std::vector<caf::actor> shards, trainers, partitioners, readers;
  caf::actor collector;
  RunClock clock;
  Telemetry* telemetry = nullptr;
};

struct PsRemoteSupervisorState {
  PsRemoteSupervisorSetup setup;
  std::vector<int32_t> incarnation;  // by node
  static inline const char* name = "troupe.ps.remote_supervisor";
};

caf::behavior PsRemoteSupervisorActor(caf::stateful_actor<PsRemoteSupervisorState>* self,
                                      PsRemoteSupervisorSetup setup);

}  // namespace troupe
