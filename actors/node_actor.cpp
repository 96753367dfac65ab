#include "actors/node_actor.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

#include "actors/server_actor.hpp"
#include "messages/atoms.hpp"
#include "messages/cluster_messages.hpp"

namespace troupe {

caf::behavior NodeActor(caf::event_based_actor* self, Telemetry* telemetry) {
  return {
      [=](spawn_server_atom, const ServerSpec& spec) {
        spdlog::info("node: hosting server {} ({} GPUs, {} CPUs, {} GB)", spec.name, spec.gpus,
                     spec.cpus, spec.memory_gb);
        return self->spawn(ServerActor, spec, telemetry);
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
