#include "agent/agent_gateway.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <asio.hpp>
#include <deque>
#include <optional>
#include <thread>
#include <unordered_set>

#include "agent/agent_auth.hpp"
#include "base/seconds.hpp"

namespace troupe::agent_wire {

using asio::ip::tcp;

struct AgentGateway::Impl {
  GatewayOptions options;
  RegisterHook hook;
  std::shared_ptr<asio::io_context> io = std::make_shared<asio::io_context>();
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<tcp::acceptor> acceptor;
  std::thread thread;
  std::unordered_set<std::shared_ptr<Session>> sessions;  // the gateway's thread only
  std::deque<std::weak_ptr<Session>> unauthenticated;     // oldest first; may hold closed ones
  GatewayCounters counters;
  std::atomic<bool> stopping{false};
  uint16_t port = 0;

  void Accept(const std::shared_ptr<Impl>& self);
  void Refuse(tcp::socket socket, const std::string& why);
  void MakeRoomForUnauthenticated();
  int64_t registered_open() const { return counters.open.load() - counters.unauthenticated.load(); }
};

namespace {

std::string PeerOf(const tcp::socket& socket) {
  asio::error_code ec;
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return "(unknown peer)";
  return peer.address().to_string() + ":" + std::to_string(peer.port());
}

agent::Envelope ErrorFrame(const std::string& message) {
  agent::Envelope e;
  e.mutable_error()->set_message(message);
  return e;
}

}  // namespace

// One connection; lives on the gateway's thread (its handlers hold it alive).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<asio::io_context> io, const std::shared_ptr<AgentGateway::Impl>& gw,
          tcp::socket socket)
      : io_(std::move(io)),
        gw_(gw),
        options_(gw->options),
        socket_(std::move(socket)),
        deadline_(*io_),
        decoder_(std::min(options_.max_frame_bytes, kMaxRegisterFrameBytes)),
        peer_(PeerOf(socket_)) {}

  asio::io_context& io() { return *io_; }
  bool gateway_stopping() const {
    auto gw = gw_.lock();
    return !gw || gw->stopping.load();
  }
  bool registered() const { return registered_; }
  bool closed() const { return closed_ || closing_; }

  void Start() {
    asio::error_code ec;
    socket_.set_option(tcp::no_delay(true), ec);
    StatusOr<std::string> nonce = MakeNonce();
    if (!nonce.ok()) {
      spdlog::error("agent gateway: {}: {}; closing the connection", peer_,
                    nonce.status().message());
      return Shutdown(nonce.status().message());
    }
    nonce_ = std::move(*nonce);
    agent::Envelope hello;
    agent::Hello* h = hello.mutable_hello();
    h->set_nonce(nonce_);
    h->set_protocol_version(kProtocolVersion);
    h->set_heartbeat_s(options_.heartbeat_s);
    h->set_read_timeout_s(options_.read_timeout_s);
    h->set_time_scale(options_.time_scale);
    QueueFrame(hello);
    ArmDeadline(std::min(options_.register_timeout_s, options_.read_timeout_s));
    ReadMore();
  }

  void Queue(std::string frame) {
    if (closed_ || closing_) return;
    writes_.push_back(std::move(frame));
    if (writes_.size() == 1) WriteNext();
  }

  // Queues the frame of `envelope`; one too large to frame closes the connection instead.
  void QueueFrame(const agent::Envelope& envelope) {
    StatusOr<std::string> bytes = Frame(envelope);
    if (!bytes.ok()) return Shutdown(bytes.status().message());
    Queue(std::move(*bytes));
  }

  // Sends `last` if given, then closes once the writes are done (at most a second later).
  void CloseAfter(const std::shared_ptr<const agent::Envelope>& last, const std::string& reason) {
    if (closed_ || closing_) return;
    if (last) {
      StatusOr<std::string> bytes = Frame(*last);  // one too large to frame is not sent
      if (bytes.ok()) Queue(std::move(*bytes));
    }
    closing_ = true;
    close_reason_ = reason;
    NotifyClosed(reason);
    ArmDeadline(1.0);
    if (writes_.empty()) Shutdown(reason);
  }

  void Shutdown(const std::string& reason) {
    if (closed_) return;
    closed_ = true;
    deadline_.cancel();
    asio::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
    NotifyClosed(reason);
    if (auto gw = gw_.lock()) {
      gw->counters.open.fetch_sub(1);
      if (!registered_) gw->counters.unauthenticated.fetch_sub(1);
      gw->sessions.erase(shared_from_this());
    }
  }

  // Logs why, counts it, tells the peer (Error frame) and closes.
  void Fail(const std::string& reason, std::atomic<int64_t>* counter) {
    if (closed_ || closing_) return;
    spdlog::warn("agent gateway: {}{}: {}; closing the connection", peer_,
                 job_id_ >= 0 ? " (job " + std::to_string(job_id_) + ")" : "", reason);
    if (counter) counter->fetch_add(1);
    CloseAfter(std::make_shared<agent::Envelope>(ErrorFrame(reason)), reason);
  }

 private:
  void NotifyClosed(const std::string& reason) {
    if (!sink_) return;
    AgentSink sink = std::move(sink_);
    sink_ = nullptr;
    sink(AgentEvent{nullptr, true, reason});
  }

  void ArmDeadline(double seconds) {
    deadline_.expires_after(SecondsToNanoseconds(seconds));
    deadline_.async_wait([self = shared_from_this(), seconds](const asio::error_code& ec) {
      if (ec == asio::error::operation_aborted || self->closed_) return;
      if (self->deadline_.expiry() > asio::steady_timer::clock_type::now()) return;  // re-armed
      if (self->closing_) return self->Shutdown(self->close_reason_);
      auto gw = self->gw_.lock();
      self->Fail("silent for " + std::to_string(seconds) + " s (read timeout)",
                 gw ? &gw->counters.timed_out : nullptr);
    });
  }

  void ReadMore() {
    socket_.async_read_some(asio::buffer(buffer_),
                            [self = shared_from_this()](const asio::error_code& ec, size_t n) {
                              if (self->closed_) return;
                              if (ec) return self->OnReadError(ec);
                              if (!self->closing_)
                                self->OnBytes(std::string_view(self->buffer_.data(), n));
                              if (!self->closed_) self->ReadMore();
                            });
  }

  void OnReadError(const asio::error_code& ec) {
    auto gw = gw_.lock();
    std::string reason =
        ec == asio::error::eof ? "the agent closed the connection" : "read failed: " + ec.message();
    if (decoder_.pending_bytes() > 0 && !closing_) {
      reason = "truncated frame: the connection ended " + std::to_string(decoder_.pending_bytes()) +
               " bytes into frame " + std::to_string(decoder_.frames_decoded());
      if (gw) gw->counters.bad_frames.fetch_add(1);
    }
    if (!closing_) {
      spdlog::log(registered_ ? spdlog::level::warn : spdlog::level::info,
                  "agent gateway: {}{}: {}", peer_,
                  job_id_ >= 0 ? " (job " + std::to_string(job_id_) + ")" : "", reason);
    }
    Shutdown(closing_ ? close_reason_ : reason);
  }

  void OnBytes(std::string_view bytes) {
    auto gw = gw_.lock();
    if (!gw) return Shutdown("the gateway stopped");
    std::vector<agent::Envelope> frames;
    Status s = decoder_.Feed(bytes, &frames);
    for (agent::Envelope& frame : frames) {
      if (closed_ || closing_) return;
      gw->counters.frames_in.fetch_add(1);
      ArmDeadline(options_.read_timeout_s);
      HandleFrame(*gw, std::move(frame));
    }
    if (!s.ok()) Fail(s.message(), &gw->counters.bad_frames);
  }

  void HandleFrame(AgentGateway::Impl& gw, agent::Envelope frame) {
    if (registered_) {
      if (frame.has_register_()) return Fail("register on a registered connection", nullptr);
      if (sink_) sink_(AgentEvent{std::make_shared<agent::Envelope>(std::move(frame)), false, ""});
      return;
    }
    if (!frame.has_register_()) {
      return Fail("expected register first, got " + std::string(BodyName(frame)),
                  &gw.counters.bad_frames);
    }
    const agent::Register& reg = frame.register_();
    if (!reg.has_token() || !TokenMatches(options_.secret, nonce_, reg.token())) {
      return Fail(reg.has_token() ? "wrong token" : "missing token", &gw.counters.auth_failed);
    }
    if (gw.registered_open() >= options_.max_connections) {
      return Fail(
          "too many connections (max_connections " + std::to_string(options_.max_connections) + ")",
          &gw.counters.refused_full);
    }
    if (reg.has_protocol_version() && reg.protocol_version() != kProtocolVersion) {
      return Fail("protocol version " + std::to_string(reg.protocol_version()) +
                      ", this gateway speaks " + std::to_string(kProtocolVersion),
                  &gw.counters.bad_frames);
    }
    auto link = std::make_shared<AgentLink>(weak_from_this(), peer_);
    Admission admission = gw.hook(reg, link);
    if (!admission.status.ok()) return Fail(admission.status.message(), &gw.counters.refused_jobs);
    registered_ = true;
    gw.counters.unauthenticated.fetch_sub(1);
    decoder_.set_max_frame_bytes(options_.max_frame_bytes);
    job_id_ = admission.job_id;
    sink_ = std::move(admission.sink);
    gw.counters.registered.fetch_add(1);
    spdlog::info("agent gateway: {} registered as job {}", peer_, job_id_);
    agent::Envelope reply;
    reply.mutable_registered()->set_job_id(job_id_);
    QueueFrame(reply);
  }

  void WriteNext() {
    asio::async_write(socket_, asio::buffer(writes_.front()),
                      [self = shared_from_this()](const asio::error_code& ec, size_t) {
                        if (self->closed_) return;
                        if (ec) return self->Shutdown("write failed: " + ec.message());
                        self->writes_.pop_front();
                        if (!self->writes_.empty()) return self->WriteNext();
                        if (self->closing_) self->Shutdown(self->close_reason_);
                      });
  }

  std::shared_ptr<asio::io_context> io_;  // first: outlives the socket and the timer
  std::weak_ptr<AgentGateway::Impl> gw_;
  GatewayOptions options_;
  tcp::socket socket_;
  asio::steady_timer deadline_;
  FrameDecoder decoder_;
  std::string peer_;
  std::string nonce_;
  std::array<char, 16384> buffer_{};
  std::deque<std::string> writes_;
  AgentSink sink_;
  bool registered_ = false;
  bool closing_ = false;
  bool closed_ = false;
  std::string close_reason_;
  int64_t job_id_ = -1;
};

AgentLink::AgentLink(std::weak_ptr<Session> session, std::string peer)
    : session_(std::move(session)), peer_(std::move(peer)) {}

void AgentLink::Send(agent::Envelope frame) {
  auto session = session_.lock();
  if (!session || session->gateway_stopping()) return;
  asio::post(session->io(), [session, frame = std::move(frame)] { session->QueueFrame(frame); });
}

void AgentLink::Close(std::shared_ptr<const agent::Envelope> last) {
  auto session = session_.lock();
  if (!session || session->gateway_stopping()) return;
  asio::post(session->io(),
             [session, last = std::move(last)] { session->CloseAfter(last, "closed by troupe"); });
}

void AgentGateway::Impl::Refuse(tcp::socket socket, const std::string& why) {
  spdlog::warn("agent gateway: {}: {}; closing the connection", PeerOf(socket), why);
  auto sock = std::make_shared<tcp::socket>(std::move(socket));
  StatusOr<std::string> bytes = Frame(ErrorFrame(why));
  auto frame = std::make_shared<std::string>(bytes.ok() ? std::move(*bytes) : std::string());
  asio::async_write(*sock, asio::buffer(*frame), [sock, frame](const asio::error_code&, size_t) {
    asio::error_code ec;
    sock->shutdown(tcp::socket::shutdown_both, ec);
    sock->close(ec);
  });
}

// Closes the oldest connection that has not registered when the unregistered ones are at their
// limit: whoever holds idle sockets open can delay a newcomer's turn, never take it away.
void AgentGateway::Impl::MakeRoomForUnauthenticated() {
  while (!unauthenticated.empty()) {  // forget the front ones that registered or closed
    std::shared_ptr<Session> front = unauthenticated.front().lock();
    if (front && !front->closed() && !front->registered()) break;
    unauthenticated.pop_front();
  }
  while (!unauthenticated.empty() &&
         counters.unauthenticated.load() >= options.max_unauthenticated) {
    std::shared_ptr<Session> oldest = unauthenticated.front().lock();
    unauthenticated.pop_front();
    if (!oldest || oldest->closed() || oldest->registered()) continue;
    oldest->Fail("closed to make room for a newer connection (max_unauthenticated " +
                     std::to_string(options.max_unauthenticated) + ")",
                 &counters.evicted);
    oldest->Shutdown("evicted");
  }
}

void AgentGateway::Impl::Accept(const std::shared_ptr<Impl>& self) {
  acceptor->async_accept([self](const asio::error_code& ec, tcp::socket socket) {
    if (self->stopping.load()) return;
    if (ec) {
      spdlog::warn("agent gateway: accept failed: {}", ec.message());
    } else if (self->registered_open() >= self->options.max_connections) {
      self->counters.refused_full.fetch_add(1);
      self->Refuse(std::move(socket), "too many connections (max_connections " +
                                          std::to_string(self->options.max_connections) + ")");
    } else {
      self->MakeRoomForUnauthenticated();
      self->counters.accepted.fetch_add(1);
      self->counters.open.fetch_add(1);
      self->counters.unauthenticated.fetch_add(1);
      auto session = std::make_shared<Session>(self->io, self, std::move(socket));
      self->sessions.insert(session);
      self->unauthenticated.push_back(session);
      session->Start();
    }
    self->Accept(self);
  });
}

AgentGateway::AgentGateway(GatewayOptions options, RegisterHook hook)
    : impl_(std::make_shared<Impl>()) {
  impl_->options = std::move(options);
  impl_->hook = std::move(hook);
}

AgentGateway::~AgentGateway() { Stop(); }

Status AgentGateway::Start() {
  const GatewayOptions& o = impl_->options;
  const std::string where = o.host + ":" + std::to_string(o.port);
  asio::error_code ec;
  const asio::ip::address address = asio::ip::make_address(o.host, ec);
  if (ec) return Status::InvalidInput("agent gateway: '" + o.host + "' is not an IP address");
  impl_->acceptor.emplace(*impl_->io);
  tcp::acceptor& acceptor = *impl_->acceptor;
  const tcp::endpoint endpoint(address, o.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::IoError("agent gateway: cannot listen on " + where + ": " + ec.message());
  impl_->port = acceptor.local_endpoint().port();
  impl_->work.emplace(impl_->io->get_executor());
  impl_->Accept(impl_);
  impl_->thread = std::thread([io = impl_->io] { io->run(); });
  spdlog::info("agent gateway: listening on {}:{}", o.host, impl_->port);
  return Status::Ok();
}

uint16_t AgentGateway::port() const { return impl_->port; }

const GatewayCounters& AgentGateway::counters() const { return impl_->counters; }

void AgentGateway::Stop(const std::string& reason, std::chrono::milliseconds grace) {
  if (!impl_->thread.joinable()) return;
  asio::post(*impl_->io, [impl = impl_, reason] {
    asio::error_code ec;
    impl->acceptor->close(ec);
    agent::Envelope goodbye;
    goodbye.mutable_goodbye()->set_reason(reason);
    auto last = std::make_shared<const agent::Envelope>(std::move(goodbye));
    const std::vector<std::shared_ptr<Session>> open(impl->sessions.begin(), impl->sessions.end());
    for (const auto& session : open) {
      if (session->registered()) {
        session->CloseAfter(last, reason);
      } else {
        session->Shutdown(reason);
      }
    }
    impl->stopping.store(true);
  });
  const auto until = std::chrono::steady_clock::now() + grace;
  while ((!impl_->stopping.load() || impl_->counters.open.load() > 0) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  impl_->stopping.store(true);
  impl_->work.reset();
  impl_->io->stop();
  impl_->thread.join();
  // Close what is left and let the aborted handlers run, so none holds a session afterwards.
  const std::vector<std::shared_ptr<Session>> left(impl_->sessions.begin(), impl_->sessions.end());
  for (const auto& session : left) session->Shutdown(reason);
  impl_->sessions.clear();
  impl_->acceptor.reset();
  impl_->io->restart();
  impl_->io->poll();
}

}  // namespace troupe::agent_wire
