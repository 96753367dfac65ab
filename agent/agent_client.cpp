#include "agent/agent_client.hpp"

#include "agent/agent_auth.hpp"
#include "agent/agent_gateway.hpp"
#include "base/status_macros.hpp"

namespace troupe::agent_wire {

Status AgentClient::Connect(const std::string& host, uint16_t port) {
  asio::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (!ec) socket_.connect(asio::ip::tcp::endpoint(address, port), ec);
  if (!ec) socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  if (ec) {
    return Status::IoError("agent client: cannot connect to " + host + ":" + std::to_string(port) +
                           ": " + ec.message());
  }
  return Status::Ok();
}

Status AgentClient::Register(const agent::JobRequest& job, std::string_view secret,
                             int64_t* job_id) {
  agent::Envelope frame;
  RETURN_IF_ERROR(Read(&frame, std::chrono::seconds(10)));
  if (!frame.has_hello()) {
    return Status::InvalidInput("agent client: expected hello, got " +
                                std::string(BodyName(frame)));
  }
  hello_ = frame.hello();
  agent::Envelope reg;
  *reg.mutable_register_()->mutable_job() = job;
  ASSIGN_OR_RETURN(const std::string token, AgentToken(secret, hello_.nonce()));
  reg.mutable_register_()->set_token(token);
  reg.mutable_register_()->set_protocol_version(kProtocolVersion);
  RETURN_IF_ERROR(Send(reg));
  RETURN_IF_ERROR(Read(&frame, std::chrono::seconds(10)));
  if (frame.has_error()) return Status::InvalidInput("refused: " + frame.error().message());
  if (!frame.has_registered()) {
    return Status::InvalidInput("agent client: expected registered, got " +
                                std::string(BodyName(frame)));
  }
  *job_id = frame.registered().job_id();
  return Status::Ok();
}

Status AgentClient::Send(const agent::Envelope& frame) {
  ASSIGN_OR_RETURN(const std::string bytes, Frame(frame));
  return SendBytes(bytes);
}

Status AgentClient::SendBytes(std::string_view bytes) {
  asio::error_code ec;
  asio::write(socket_, asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec) return Status::IoError("agent client: write failed: " + ec.message());
  return Status::Ok();
}

Status AgentClient::Read(agent::Envelope* frame, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (next_ready_ == ready_.size()) {
    ready_.clear();
    next_ready_ = 0;
    if (std::chrono::steady_clock::now() >= until) return Status::IoError("timed out");
    // Wait for readability with the remaining time, then read what is there.
    std::array<char, 16384> buffer;
    asio::error_code ec;
    socket_.non_blocking(true, ec);
    size_t n = socket_.read_some(asio::buffer(buffer), ec);
    if (ec == asio::error::would_block) {
      io_.restart();
      bool ready = false;
      socket_.async_wait(asio::ip::tcp::socket::wait_read,
                         [&](const asio::error_code&) { ready = true; });
      io_.run_for(std::chrono::duration_cast<std::chrono::nanoseconds>(
          until - std::chrono::steady_clock::now()));
      if (!ready) {
        socket_.cancel(ec);
        io_.restart();
        io_.run();
        return Status::IoError("timed out");
      }
      continue;
    }
    if (ec == asio::error::eof) return Status::IoError("closed");
    if (ec) return Status::IoError("closed: " + ec.message());
    RETURN_IF_ERROR(decoder_.Feed(std::string_view(buffer.data(), n), &ready_));
  }
  *frame = std::move(ready_[next_ready_++]);
  return Status::Ok();
}

void AgentClient::Close() {
  asio::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

}  // namespace troupe::agent_wire
