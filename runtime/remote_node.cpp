#include "runtime/remote_node.hpp"

#include <caf/function_view.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/sec.hpp>
#include <chrono>
#include <thread>

namespace troupe {
namespace {

// CAF's remote_actor waits for the peer's handshake without end: a listener on the port that
// never answers one (another program took the port of a node that died) would hold the caller for
// ever. One attempt here gives up after kAttempt, and the caller tries again.
constexpr std::chrono::seconds kAttempt{3};
constexpr std::chrono::seconds kConnectFor{10};

caf::expected<caf::actor> RemoteActor(caf::actor_system& sys, const std::string& host,
                                      uint16_t port) {
  const caf::io::middleman_actor& manager = sys.has_openssl_manager()
                                                ? sys.openssl_manager().actor_handle()
                                                : sys.middleman().actor_handle();
  auto connect = caf::make_function_view(manager, caf::duration{kAttempt});
  auto answer = connect(caf::connect_atom::value, host, port);
  if (!answer) return std::move(answer.error());
  caf::strong_actor_ptr& remote = std::get<1>(*answer);
  if (!remote) return caf::make_error(caf::sec::no_actor_published_at_port, port);
  // As remote_actor<caf::actor>: a typed actor is not a node.
  if (!std::get<2>(*answer).empty()) {
    return caf::make_error(caf::sec::unexpected_actor_messaging_interface);
  }
  return caf::actor_cast<caf::actor>(std::move(remote));
}

}  // namespace

Status ConnectNode(caf::actor_system& sys, const std::string& address, caf::actor* node) {
  const auto colon = address.rfind(':');
  const std::string host = address.substr(0, colon);
  const auto port = static_cast<uint16_t>(std::stoi(address.substr(colon + 1)));
  const bool tls = sys.has_openssl_manager();
  // The node may still be starting: retry for a while before giving up. A handshake broken off
  // is a refusal (one side's certificate is not from the other's deployment, or one side has
  // none): retrying cannot help.
  std::string why;
  const auto deadline = std::chrono::steady_clock::now() + kConnectFor;
  while (std::chrono::steady_clock::now() < deadline) {
    auto remote = RemoteActor(sys, host, port);
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
  auto published = sys.has_openssl_manager()
                       ? caf::openssl::publish(actor, port, host.c_str(), true)
                       : sys.middleman().publish(actor, port, host.c_str(), true);
  if (!published) {
    return Status::IoError("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                           sys.render(published.error()));
  }
  *bound = *published;
  return Status::Ok();
}

}  // namespace troupe
