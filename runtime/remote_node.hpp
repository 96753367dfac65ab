// Connecting to a `troupe node` over CAF's middleman, and publishing one. This is driver code, not
// actor code: it runs before the run's actors exist and may wait on the wall clock for a node that
// is still starting (up to about 10 s). When the actor system was made with deployment credentials
// (RuntimeOptions::credentials), both go through CAF's OpenSSL module: mutual TLS, and a peer
// without a certificate from the deployment CA is refused during the handshake.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <cstdint>
#include <string>

#include "base/status.hpp"

namespace troupe {

// `address` is "host:port" (checked by the config's validation).
Status ConnectNode(caf::actor_system& sys, const std::string& address, caf::actor* node);

// ConnectNode again and again for up to 10 s, a refusal included: a node process restarting on
// its old port may cut a connection it is not ready for (a broken handshake), which ConnectNode
// alone takes as a refusal. A node of another deployment keeps refusing and is reported after
// the wait. For a supervisor reconnecting to a node it knew (actors/ps/remote_supervisor.hpp).
Status ReconnectNode(caf::actor_system& sys, const std::string& address, caf::actor* node);

// Listens for peers on host:port (0: an ephemeral port) and hands them `actor`; `*bound` is the
// port bound.
Status PublishNode(caf::actor_system& sys, const caf::actor& actor, const std::string& host,
                   uint16_t port, uint16_t* bound);

}  // namespace troupe
