#include "runtime/remote_node.hpp"

#include <caf/sec.hpp>
#include <chrono>
#include <thread>

#include "base/status_macros.hpp"
#include "network/network_plugin.hpp"

namespace troupe {
namespace {

// One attempt gives up after kAttempt (CAF's own remote_actor would wait for a handshake that
// never comes without end), and the caller tries again until kConnectFor has passed.
constexpr std::chrono::seconds kAttempt{3};
constexpr std::chrono::seconds kConnectFor{10};

}  // namespace

Status ConnectNode(caf::actor_system& sys, const std::string& address, caf::actor* node) {
  const auto colon = address.rfind(':');
  const std::string host = address.substr(0, colon);
  const auto port = static_cast<uint16_t>(std::stoi(address.substr(colon + 1)));
  const NetworkTable* network = nullptr;
  RETURN_IF_ERROR(LoadNetwork(&network));
  const bool tls = sys.has_openssl_manager();
  // The node may still be starting: retry for a while before giving up. A handshake broken off
  // is a refusal (one side's certificate is not from the other's deployment, or one side has
  // none): retrying cannot help.
  std::string why;
  const auto deadline = std::chrono::steady_clock::now() + kConnectFor;
  while (std::chrono::steady_clock::now() < deadline) {
    auto remote = network->remote_actor(sys, host, port, caf::duration{kAttempt});
    if (remote) {
      *node = *remote;
      return Status::Ok();
    }
    why = sys.render(remote.error());
    if (remote.error() == caf::sec::disconnect_during_handshake) {
      return Status::IoError("node " + address +
                             ": refused during the handshake: the node and this run are not of "
                             "one deployment (credentials on one side only, or from another CA; "
                             "docs/deploy.md): " +
                             why);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Status::IoError(
      "node " + address + ": cannot connect" +
      (tls ? " (is the node started with --credentials of this deployment?)" : "") + ": " + why);
}

Status ReconnectNode(caf::actor_system& sys, const std::string& address, caf::actor* node) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    Status s = ConnectNode(sys, address, node);
    if (s.ok() || std::chrono::steady_clock::now() > deadline) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

Status PublishNode(caf::actor_system& sys, const caf::actor& actor, const std::string& host,
                   uint16_t port, uint16_t* bound) {
  const NetworkTable* network = nullptr;
  RETURN_IF_ERROR(LoadNetwork(&network));
  auto published = network->publish(sys, actor, host, port);
  if (!published) {
    return Status::IoError("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                           sys.render(published.error()));
  }
  *bound = *published;
  return Status::Ok();
}

}  // namespace troupe
