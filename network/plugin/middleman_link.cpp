// CAF's middleman and its OpenSSL module: the only code of troupe that links libcaf_io and
// libcaf_openssl (network/network_abi.hpp).
#include <caf/function_view.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/sec.hpp>

#include "network/plugin/bounded_multiplexer.hpp"
#include "network/plugin/network_impl.hpp"

namespace troupe::network_impl {

// The default backend, but no peer can make a plaintext connection allocate more than its frame
// ceiling (bounded_multiplexer.hpp).
void LoadMiddleman(caf::actor_system_config& config, bool tls) {
  config.load<caf::io::middleman, BoundedMultiplexer>();
  if (tls) config.load<caf::openssl::manager>();
}

// CAF's remote_actor waits for the peer's handshake without end: a listener on the port that
// never answers one (another program took the port of a node that died) would hold the caller for
// ever. Asking the middleman as remote_actor does, but through a function view, bounds the wait.
caf::expected<caf::actor> RemoteActor(caf::actor_system& sys, const std::string& host,
                                      uint16_t port, caf::duration wait) {
  const caf::io::middleman_actor& manager = sys.has_openssl_manager()
                                                ? sys.openssl_manager().actor_handle()
                                                : sys.middleman().actor_handle();
  auto connect = caf::make_function_view(manager, wait);
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

caf::expected<uint16_t> Publish(caf::actor_system& sys, const caf::actor& actor,
                                const std::string& host, uint16_t port) {
  return sys.has_openssl_manager() ? caf::openssl::publish(actor, port, host.c_str(), true)
                                   : sys.middleman().publish(actor, port, host.c_str(), true);
}

}  // namespace troupe::network_impl
