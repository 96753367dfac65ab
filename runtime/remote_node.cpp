#include "runtime/remote_node.hpp"

#include <caf/io/middleman.hpp>
#include <chrono>
#include <thread>

namespace troupe {

Status ConnectNode(caf::actor_system& sys, const std::string& address, caf::actor* node) {
  const auto colon = address.rfind(':');
  const std::string host = address.substr(0, colon);
  const auto port = static_cast<uint16_t>(std::stoi(address.substr(colon + 1)));
  // The node may still be starting: retry for a while before giving up.
  std::string why;
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto remote = sys.middleman().remote_actor(host, port);
    if (remote) {
      *node = *remote;
      return Status::Ok();
    }
    why = sys.render(remote.error());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Status::IoError("node " + address + ": cannot connect: " + why);
}

}  // namespace troupe
