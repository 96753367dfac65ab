#include "actors/node_actor.hpp"

#include <spdlog/spdlog.h>

#include <caf/exit_reason.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>

#include "actors/allreduce_rank_actor.hpp"
#include "actors/ps/remote_shard.hpp"
#include "actors/server_actor.hpp"
#include "messages/atoms.hpp"
#include "messages/cluster_messages.hpp"

namespace troupe {

caf::behavior NodeActor(caf::event_based_actor* self, Telemetry* telemetry) {
  // The servers hosted here that are still alive. A run that ends tells its servers to exit; one
  // that dies (its process killed) cannot, so the node stops whatever is left when it stops
  // itself, or `troupe node` would wait for them forever on SIGTERM.
  auto hosted = std::make_shared<std::set<caf::actor_addr>>();
  self->set_down_handler([hosted](caf::down_msg& down) { hosted->erase(down.source); });
  self->attach_functor([hosted] {
    for (const caf::actor_addr& server : *hosted) {
      caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    }
  });
  return {
      [=](spawn_server_atom, const ServerSpec& spec) {
        spdlog::info("node: hosting server {} ({} GPUs, {} CPUs, {} GB)", spec.name, spec.gpus,
                     spec.cpus, spec.memory_gb);
        caf::actor server = self->spawn(ServerActor, spec, telemetry);
        self->monitor(server);
        hosted->insert(server.address());
        return server;
      },
      [=](spawn_rank_atom) {
        // A member of an all-reduce among processes (actors/allreduce_rank_actor.hpp); it lives
        // as long as the node, or until its group's driver tells it to exit.
        caf::actor rank = self->spawn(AllReduceRankActor, telemetry);
        self->monitor(rank);
        hosted->insert(rank.address());
        return rank;
      },
      [=](spawn_ps_atom, const PsShardSpawn& spec) {
        // A parameter-server shard of a run elsewhere (actors/ps/remote_shard.hpp), on this
        // node's own SSD-PS folder; it quits after the run's last step.
        PsShardSpawned spawned = SpawnShardHere(self, spec, telemetry);
        if (spawned.shard) {
          self->monitor(spawned.shard);
          hosted->insert(spawned.shard.address());
        }
        return spawned;
      },
      [=](crash_atom) {
        // A `crash node:HOST:PORT` fault: the process dies at once, as under kill -9 (no
        // goodbye to peers; they learn it from the broken connection or missing heartbeats).
        spdlog::warn("node: crash fault: exiting at once");
        std::fflush(nullptr);
        std::_Exit(137);
      },
  };
}

}  // namespace troupe
