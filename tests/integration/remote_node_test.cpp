// Connecting to a node is bounded: a port held by something that accepts connections but never
// answers CAF's handshake (another program took the port of a node that died) is an error after
// the connect's wait (runtime/remote_node.hpp), not a caller held for ever. CAF's own
// remote_actor waits for that handshake without end, and a PS supervisor reconnecting to a
// restarted node did just that once.
#include "runtime/remote_node.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <string>

#include "messages/message_types.hpp"

namespace troupe {
namespace {

// A TCP listener on 127.0.0.1 that the kernel accepts connections for and nobody ever reads.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() {
    if (fd_ >= 0) ::close(fd_);
  }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

TEST(RemoteNode, APortThatNeverAnswersTheHandshakeIsAnError) {
  SilentListener listener;
  ASSERT_NE(listener.port(), 0) << "cannot listen on 127.0.0.1";
  caf::actor_system_config config;
  RegisterMessageTypes(config);
  config.load<caf::io::middleman>();
  caf::actor_system system{config};
  caf::actor node;
  const std::string address = "127.0.0.1:" + std::to_string(listener.port());
  const Status s = ConnectNode(system, address, &node);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node " + address + ": cannot connect"), std::string::npos)
      << s.message();
  EXPECT_FALSE(node);
}

}  // namespace
}  // namespace troupe
