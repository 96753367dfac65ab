#include "agent/external_link.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "agent/agent_auth.hpp"

namespace troupe::agent_wire {
namespace {

// Wall seconds a new connection has to register.
constexpr double kRegisterTimeoutS = 5;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Milliseconds left until `deadline` for poll(), at least 0.
int MillisLeft(double deadline) {
  const double left = deadline - Now();
  if (left <= 0) return 0;
  return static_cast<int>(std::min(std::ceil(left * 1000), 1e9));
}

// Waits until `fd` is readable; false at the deadline.
bool WaitReadable(int fd, double deadline) {
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int n = poll(&p, 1, MillisLeft(deadline));
    if (n > 0) return true;
    if (n == 0 || errno != EINTR) return false;
  }
}

Status WritePortFile(const std::string& path, uint16_t port) {
  const std::string staging = path + ".tmp";
  {
    std::ofstream out(staging, std::ios::trunc);
    out << port << "\n";
    if (!out)
      return Status::IoError("external_scheduler.port_file: cannot write '" + staging + "'");
  }
  std::error_code ec;
  std::filesystem::rename(staging, path, ec);
  if (ec) {
    return Status::IoError("external_scheduler.port_file: cannot write '" + path +
                           "': " + ec.message());
  }
  return Status::Ok();
}

std::string Seconds(double s) {
  std::string text = std::to_string(s);
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text + " s";
}

}  // namespace

ExternalLink::~ExternalLink() { Close("the run ended"); }

Status ExternalLink::Listen() {
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(options_.port);
  if (inet_pton(AF_INET, options_.host.c_str(), &address.sin_addr) != 1) {
    return Status::InvalidInput("external_scheduler.listen: '" + options_.host +
                                "' is not an IPv4 address");
  }
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (listen_fd_ < 0 || setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
      bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listen_fd_, 8) != 0) {
    const std::string why = std::strerror(errno);
    if (listen_fd_ >= 0) close(listen_fd_);
    listen_fd_ = -1;
    return Status::IoError("external scheduler: cannot listen on " + where + ": " + why);
  }
  socklen_t length = sizeof(address);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  spdlog::info("external scheduler: listening on {}:{}", options_.host, port_);
  if (options_.port_file.empty()) return Status::Ok();
  return WritePortFile(options_.port_file, port_);
}

Status ExternalLink::Accept(external::Hello hello) {
  const double deadline = Now() + options_.connect_timeout_s;
  std::string last_refusal;
  while (WaitReadable(listen_fd_, deadline)) {
    fd_ = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd_ < 0) continue;
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // one small frame per turn
    // A connection that does not register soon gives way to the next: whoever holds one open
    // silently cannot keep the scheduler out until the deadline.
    Status s = Authenticate(hello, std::min(deadline, Now() + kRegisterTimeoutS));
    if (s.ok()) return s;
    last_refusal = s.message();
    spdlog::warn("external scheduler: connection refused: {}", last_refusal);
  }
  return Status::IoError("external scheduler: none registered within " +
                         Seconds(options_.connect_timeout_s) +
                         " (external_scheduler.connect_timeout_s)" +
                         (last_refusal.empty() ? "" : "; the last one: " + last_refusal));
}

Status ExternalLink::Authenticate(external::Hello hello, double deadline) {
  StatusOr<std::string> nonce = MakeNonce();
  if (!nonce.ok()) {
    Disconnect();
    return nonce.status();
  }
  hello.set_nonce(*nonce);
  hello.set_protocol_version(kExternalProtocolVersion);
  external::Envelope out;
  *out.mutable_hello() = std::move(hello);
  if (Status s = Send(out); !s.ok()) return s;
  external::Envelope in;
  if (Status s = Receive(std::max(0.0, deadline - Now()), &in); !s.ok()) return s;
  if (!in.has_register_()) return Fail("the first frame must be register");
  if (!TokenMatches(options_.secret, *nonce, in.register_().token())) {
    return Fail("wrong token (HMAC-SHA256 of the nonce under the shared secret)");
  }
  if (in.register_().protocol_version() != kExternalProtocolVersion) {
    return Fail("protocol_version " + std::to_string(in.register_().protocol_version()) +
                ", troupe speaks " + std::to_string(kExternalProtocolVersion));
  }
  external::Envelope registered;
  registered.mutable_registered();
  spdlog::info("external scheduler: '{}' registered", in.register_().name());
  return Send(registered);
}

Status ExternalLink::Send(const external::Envelope& envelope) {
  if (fd_ < 0) return Status::IoError("external scheduler: not connected");
  const size_t size = envelope.ByteSizeLong();
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((size >> (24 - 8 * i)) & 0xff);
  envelope.AppendToString(&frame);
  size_t sent = 0;
  while (sent < frame.size()) {
    const ssize_t n = send(fd_, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      Disconnect();
      return Status::IoError("external scheduler: the connection broke: " + why);
    }
    sent += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status ExternalLink::ReadExact(char* data, size_t size, double deadline) {
  size_t got = 0;
  while (got < size) {
    if (!WaitReadable(fd_, deadline)) {
      Disconnect();  // a frame cut short cannot be resynchronised
      return Status::IoError("external scheduler: no whole frame in time");
    }
    const ssize_t n = recv(fd_, data + got, size - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Disconnect();
      return Status::IoError("external scheduler: the connection closed");
    }
    got += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status ExternalLink::Receive(double timeout_s, external::Envelope* out) {
  if (fd_ < 0) return Status::IoError("external scheduler: not connected");
  const double deadline = Now() + timeout_s;
  if (!WaitReadable(fd_, deadline)) {
    return Status::IoError("external scheduler: no answer within " + Seconds(timeout_s));
  }
  unsigned char header[4];
  if (Status s = ReadExact(reinterpret_cast<char*>(header), 4, deadline); !s.ok()) return s;
  const uint32_t length = (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) |
                          (uint32_t{header[2]} << 8) | uint32_t{header[3]};
  if (length == 0) return Fail("malformed frame: length 0");
  if (length > options_.max_frame_bytes) {
    return Fail("malformed frame: length " + std::to_string(length) + " is over the limit of " +
                std::to_string(options_.max_frame_bytes));
  }
  std::string payload(length, '\0');
  if (Status s = ReadExact(payload.data(), length, deadline); !s.ok()) return s;
  if (!out->ParseFromString(payload)) {
    return Fail("malformed frame: " + std::to_string(length) +
                " bytes that are not an external scheduler envelope");
  }
  if (out->body_case() == external::Envelope::BODY_NOT_SET) {
    return Fail("malformed frame: an envelope with no known body");
  }
  if (out->has_error()) {
    Disconnect();
    return Status::IoError("external scheduler: it sent an error: " + out->error().message());
  }
  return Status::Ok();
}

Status ExternalLink::Fail(const std::string& reason) {
  external::Envelope error;
  error.mutable_error()->set_message(reason);
  if (fd_ >= 0) (void)Send(error);
  Disconnect();
  return Status::InvalidInput("external scheduler: " + reason);
}

void ExternalLink::Disconnect() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

void ExternalLink::Close(const std::string& reason) {
  if (fd_ >= 0) {
    external::Envelope goodbye;
    goodbye.mutable_goodbye()->set_reason(reason);
    (void)Send(goodbye);
  }
  Disconnect();
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
}

}  // namespace troupe::agent_wire
