// ExternalLink: troupe's end of the connection to an external scheduler
// (messages/external_scheduler.proto, docs/external-scheduler.md).
//
// The agent protocol's transport, blocking: troupe listens on a loopback TCP port, one scheduler
// connects and proves it holds the shared secret (HMAC-SHA256 of the nonce in Hello, compared in
// constant time; a wrong token gets Error and troupe waits for another connection), then every
// round troupe sends a RoundState and waits, up to a timeout, for the Allocation. Blocking is
// what the scheduler actor wants: in emulated mode the run is one thread on a virtual clock, so
// waiting for the answer inside the round costs wall time only, never determinism.
//
// A frame that is not an envelope (a zero or oversized length, bytes that do not parse, no
// body), a closed connection or an Error frame ends the connection: Receive returns the reason,
// having sent the peer an Error naming it where the socket still takes one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.hpp"
#include "base/status_or.hpp"
#include "messages/external_scheduler.pb.h"

namespace troupe::agent_wire {

inline constexpr uint32_t kExternalProtocolVersion = 1;

struct ExternalLinkOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;                 // 0: a free one (port())
  std::string secret;                // shared with the scheduler; never sent
  std::string port_file;             // written with the port once listening ("" writes none)
  double connect_timeout_s = 60;     // wall seconds Accept waits for a registered scheduler
  size_t max_frame_bytes = 1 << 20;  // the largest frame accepted from the scheduler
};

class ExternalLink {
 public:
  explicit ExternalLink(ExternalLinkOptions options) : options_(std::move(options)) {}
  ~ExternalLink();
  ExternalLink(const ExternalLink&) = delete;
  ExternalLink& operator=(const ExternalLink&) = delete;

  // Binds and listens; writes the port file.
  Status Listen();
  uint16_t port() const { return port_; }

  // Waits for a scheduler to connect and register, sending it `hello` (its nonce and protocol
  // version filled in here). Connections that fail to authenticate, or do not register within
  // 5 s, are refused and the wait goes on until connect_timeout_s. Connections are watched all
  // at once; at most 8 wait to register, and a new one closes the oldest of them.
  Status Accept(external::Hello hello);
  bool connected() const { return fd_ >= 0; }

  Status Send(const external::Envelope& envelope);
  // The next whole frame, within timeout_s wall seconds. On any failure the connection is closed.
  Status Receive(double timeout_s, external::Envelope* out);
  // Sends Goodbye (when connected) and closes everything.
  void Close(const std::string& reason);

 private:
  struct Pending;
  StatusOr<Pending> Greet(external::Hello hello);
  StatusOr<bool> ReadRegister(Pending* p);
  static bool SendFrame(int fd, const external::Envelope& envelope);
  Status ReadExact(char* data, size_t size, double deadline);
  Status Fail(const std::string& reason);  // Error to the peer, close, return the reason
  void Disconnect();

  ExternalLinkOptions options_;
  int listen_fd_ = -1;
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace troupe::agent_wire
