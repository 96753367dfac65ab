// Connecting to a node is bounded: a port held by something that accepts connections but never
// answers CAF's handshake (another program took the port of a node that died) is an error after
// the connect's wait (runtime/remote_node.hpp), not a caller held for ever. CAF's own
// remote_actor waits for that handshake without end, and a PS supervisor reconnecting to a
// restarted node did just that once. And a node bounds what a peer can make it allocate: a BASP
// header claiming gigabytes of payload, before any handshake, closes that connection only.
#include "runtime/remote_node.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "messages/message_types.hpp"
#include "tests/integration/node_process.hpp"
#include "tests/integration/run_fixture.hpp"

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

// The resident set of `pid` in kB (VmRSS in /proc/PID/status), -1 if unreadable.
int64_t ResidentKb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// Connects to 127.0.0.1:`port` and sends one 32-byte BASP header (CAF's network byte order:
// operation, two pad bytes, flags, payload_len, operation_data, source and destination actor)
// and nothing else. Returns the socket, or -1.
int SendHeader(uint16_t port, uint8_t operation, uint32_t payload_len) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
  uint8_t header[32] = {operation};
  const uint32_t length = htonl(payload_len);
  std::memcpy(header + 4, &length, 4);
  if (::send(fd, header, sizeof header, MSG_NOSIGNAL) != sizeof header) return -1;
  return fd;
}

// True once the node has closed `fd` (everything it sent before is skipped); false if it is
// still open after 30 s.
bool ClosedByPeer(int fd) {
  timeval wait{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;
  }
}

// One header before the handshake used to take a node from 15 MB to gigabytes (CAF's broker
// sized its buffer to the claimed payload) and a few of them aborted it. Now each such connection
// is closed at once, the node stays small, and the next peer still connects.
TEST(RemoteNode, AHugeFrameBeforeTheHandshakeIsRefusedAndTheNodeServesOn) {
  testing::NodeProcess node(testing::FreshDir("node-huge-frame"));
  const std::string address = node.WaitForAddress();
  ASSERT_FALSE(address.empty()) << "the node did not start";
  const auto port = static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  const int64_t before_kb = ResidentKb(node.pid());
  ASSERT_GT(before_kb, 0);
  // A client_handshake claiming 4 GiB, and a direct_message claiming 2 GiB.
  for (const auto& [operation, length] : {std::pair<uint8_t, uint32_t>{1, 0xFFFFFFF0u},
                                          std::pair<uint8_t, uint32_t>{2, 0x80000000u}}) {
    const int fd = SendHeader(port, operation, length);
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(ClosedByPeer(fd)) << "operation " << int{operation};
    ::close(fd);
  }
  EXPECT_LT(ResidentKb(node.pid()), before_kb + 256 * 1024)
      << "kB resident; " << before_kb << " kB before";
  caf::actor_system_config config;
  RegisterMessageTypes(config);
  config.load<caf::io::middleman>();
  caf::actor_system system{config};
  caf::actor remote;
  const Status s = ConnectNode(system, address, &remote);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(remote);
}

}  // namespace
}  // namespace troupe
