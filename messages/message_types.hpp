// Registers every troupe message type with a CAF actor system config, under one name per type,
// so the same names exist on every node of a multi-process run. A type registered only on the
// sender arrives as an empty message: call this on every node before the system starts.
#pragma once

namespace caf {
class actor_system_config;
}

namespace troupe {

void RegisterMessageTypes(caf::actor_system_config& cfg);

}  // namespace troupe
