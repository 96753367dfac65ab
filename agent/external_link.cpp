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
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <vector>

#include "agent/agent_auth.hpp"
#include "base/seconds.hpp"
#include "base/status_macros.hpp"

namespace troupe::agent_wire {
namespace {

// Wall seconds a new connection has to register; connections waiting to register, at most; the
// largest frame one may send before it has (a Register is far smaller).
constexpr double kRegisterTimeoutS = 5;
constexpr size_t kMaxPending = 8;
constexpr uint32_t kMaxRegisterBytes = 64 << 10;

// Milliseconds left until `deadline` for poll(), at least 0.
int MillisLeft(double deadline) {
  const double left = deadline - SteadyWallSeconds();
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
      listen(listen_fd_, SOMAXCONN) != 0) {
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

// Where a connection that has not registered yet stands: it has been sent Hello with `nonce` and
// has until `deadline` to answer Register; `bytes` is what it sent so far (never past one frame).
struct ExternalLink::Pending {
  int fd = -1;
  std::string nonce;
  double deadline = 0;
  std::string bytes;
};

// Every connection waiting to register is watched at once, so none can hold the others' turn: a
// silent one is closed at its own 5 s, and once kMaxPending wait, a new one closes the oldest
// (whoever holds sockets open without the secret can delay the scheduler, never lock it out).
Status ExternalLink::Accept(external::Hello hello) {
  const double deadline = SteadyWallSeconds() + options_.connect_timeout_s;
  std::deque<Pending> pending;
  std::string last_refusal;
  auto refuse = [&](size_t i, const std::string& reason) {
    external::Envelope error;
    error.mutable_error()->set_message(reason);
    (void)SendFrame(pending[i].fd, error);
    close(pending[i].fd);
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    last_refusal = reason;
    spdlog::warn("external scheduler: connection refused: {}", reason);
  };
  while (SteadyWallSeconds() < deadline) {
    double wake = deadline;
    std::vector<pollfd> polled{{listen_fd_, POLLIN, 0}};
    for (const Pending& p : pending) {
      wake = std::min(wake, p.deadline);
      polled.push_back({p.fd, POLLIN, 0});
    }
    if (poll(polled.data(), polled.size(), MillisLeft(wake)) < 0 && errno != EINTR) break;
    // From the newest back, so that erasing one leaves the indices still to visit valid.
    for (size_t i = pending.size(); i-- > 0;) {
      if (polled[i + 1].revents != 0) {
        StatusOr<bool> registered = ReadRegister(&pending[i]);
        if (!registered.ok()) {
          refuse(i, registered.status().message());
        } else if (*registered) {
          fd_ = pending[i].fd;
          pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
          for (const Pending& p : pending) close(p.fd);
          external::Envelope out;
          out.mutable_registered();
          return Send(out);
        }
      } else if (SteadyWallSeconds() >= pending[i].deadline) {
        refuse(i, "did not register within " + Seconds(kRegisterTimeoutS));
      }
    }
    if (polled[0].revents != 0) {
      if (pending.size() >= kMaxPending) {
        refuse(0, "closed to make room for a newer connection (" + std::to_string(kMaxPending) +
                      " at most wait to register)");
      }
      if (StatusOr<Pending> p = Greet(hello); p.ok()) pending.push_back(std::move(*p));
    }
  }
  for (const Pending& p : pending) close(p.fd);
  return Status::IoError("external scheduler: none registered within " +
                         Seconds(options_.connect_timeout_s) +
                         " (external_scheduler.connect_timeout_s)" +
                         (last_refusal.empty() ? "" : "; the last one: " + last_refusal));
}

// Accepts one connection and sends it Hello with a fresh nonce.
StatusOr<ExternalLink::Pending> ExternalLink::Greet(external::Hello hello) {
  Pending p;
  p.fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (p.fd < 0) return Status::IoError(std::strerror(errno));
  const int one = 1;
  setsockopt(p.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // one small frame per turn
  StatusOr<std::string> nonce = MakeNonce();
  if (!nonce.ok()) {
    close(p.fd);
    return nonce.status();
  }
  p.nonce = std::move(*nonce);
  p.deadline = SteadyWallSeconds() + kRegisterTimeoutS;
  hello.set_nonce(p.nonce);
  hello.set_protocol_version(kExternalProtocolVersion);
  external::Envelope out;
  *out.mutable_hello() = std::move(hello);
  if (!SendFrame(p.fd, out)) {
    close(p.fd);
    return Status::IoError("the connection broke");
  }
  return p;
}

// Reads what `p` has sent, never past its first frame: true once that frame is a valid Register,
// false while it is incomplete, an error (the refusal's reason) when it is not one.
StatusOr<bool> ExternalLink::ReadRegister(Pending* p) {
  size_t want = 4;
  if (p->bytes.size() >= 4) {
    const auto* h = reinterpret_cast<const unsigned char*>(p->bytes.data());
    const uint32_t length =
        (uint32_t{h[0]} << 24) | (uint32_t{h[1]} << 16) | (uint32_t{h[2]} << 8) | uint32_t{h[3]};
    if (length == 0 || length > kMaxRegisterBytes) {
      return Status::InvalidInput("malformed frame: length " + std::to_string(length) +
                                  " before registering (at most " +
                                  std::to_string(kMaxRegisterBytes) + ")");
    }
    want = 4 + size_t{length};
  }
  char buffer[4096];
  const ssize_t n =
      recv(p->fd, buffer, std::min(sizeof(buffer), want - p->bytes.size()), MSG_DONTWAIT);
  if (n == 0) return Status::IoError("the connection closed before registering");
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) return false;
    return Status::IoError(std::string("read failed: ") + std::strerror(errno));
  }
  p->bytes.append(buffer, static_cast<size_t>(n));
  if (p->bytes.size() == 4) return ReadRegister(p);  // the length is known: read on
  if (p->bytes.size() < want || want == 4) return false;
  external::Envelope in;
  if (!in.ParseFromArray(p->bytes.data() + 4, static_cast<int>(p->bytes.size() - 4)) ||
      !in.has_register_()) {
    return Status::InvalidInput("the first frame must be register");
  }
  if (!TokenMatches(options_.secret, p->nonce, in.register_().token())) {
    return Status::InvalidInput("wrong token (HMAC-SHA256 of the nonce under the shared secret)");
  }
  if (in.register_().protocol_version() != kExternalProtocolVersion) {
    return Status::InvalidInput("protocol_version " +
                                std::to_string(in.register_().protocol_version()) +
                                ", troupe speaks " + std::to_string(kExternalProtocolVersion));
  }
  spdlog::info("external scheduler: '{}' registered", in.register_().name());
  return true;
}

bool ExternalLink::SendFrame(int fd, const external::Envelope& envelope) {
  const size_t size = envelope.ByteSizeLong();
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((size >> (24 - 8 * i)) & 0xff);
  envelope.AppendToString(&frame);
  size_t sent = 0;
  while (sent < frame.size()) {
    const ssize_t n = send(fd, frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

Status ExternalLink::Send(const external::Envelope& envelope) {
  if (fd_ < 0) return Status::IoError("external scheduler: not connected");
  if (!SendFrame(fd_, envelope)) {
    const std::string why = std::strerror(errno);
    Disconnect();
    return Status::IoError("external scheduler: the connection broke: " + why);
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
  const double deadline = SteadyWallSeconds() + timeout_s;
  if (!WaitReadable(fd_, deadline)) {
    return Status::IoError("external scheduler: no answer within " + Seconds(timeout_s));
  }
  unsigned char header[4];
  RETURN_IF_ERROR(ReadExact(reinterpret_cast<char*>(header), 4, deadline));
  const uint32_t length = (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) |
                          (uint32_t{header[2]} << 8) | uint32_t{header[3]};
  if (length == 0) return Fail("malformed frame: length 0");
  if (length > options_.max_frame_bytes) {
    return Fail("malformed frame: length " + std::to_string(length) + " is over the limit of " +
                std::to_string(options_.max_frame_bytes));
  }
  std::string payload(length, '\0');
  RETURN_IF_ERROR(ReadExact(payload.data(), length, deadline));
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
