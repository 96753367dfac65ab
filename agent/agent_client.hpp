// AgentClient: a blocking agent-side connection (Asio), for C++ training processes, the tests
// and the benchmark. One thread uses it at a time. Register() does the handshake: reads Hello,
// answers Register with HMAC-SHA256(secret, nonce), reads Registered (or the gateway's Error).
#pragma once

#include <asio.hpp>
#include <chrono>
#include <string>
#include <string_view>

#include "agent/frame_codec.hpp"
#include "base/status.hpp"
#include "messages/agent.pb.h"

namespace troupe::agent_wire {

class AgentClient {
 public:
  AgentClient() : socket_(io_) {}

  Status Connect(const std::string& host, uint16_t port);
  // Hello, Register, Registered. On success *job_id is troupe's id of the job.
  Status Register(const agent::JobRequest& job, std::string_view secret, int64_t* job_id);

  Status Send(const agent::Envelope& frame);
  Status SendBytes(std::string_view bytes);  // anything, for tests of bad input
  // The next frame within `timeout`; IoError "closed" when the gateway closed the connection.
  Status Read(agent::Envelope* frame, std::chrono::milliseconds timeout);
  void Close();

  const agent::Hello& hello() const { return hello_; }

 private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  FrameDecoder decoder_{UINT32_MAX};
  std::vector<agent::Envelope> ready_;
  size_t next_ready_ = 0;
  agent::Hello hello_;
};

}  // namespace troupe::agent_wire
