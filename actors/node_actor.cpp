#include "actors/node_actor.hpp"

#include <spdlog/spdlog.h>

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
  };
}

}  // namespace troupe
