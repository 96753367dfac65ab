// Connecting to a `troupe node` over CAF's middleman. This is driver code, not actor code: it
// runs before the run's actors exist and may wait on the wall clock for a node that is still
// starting (up to about 10 s).
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <string>

#include "base/status.hpp"

namespace troupe {

// `address` is "host:port" (checked by the config's validation).
Status ConnectNode(caf::actor_system& sys, const std::string& address, caf::actor* node);

}  // namespace troupe
