// AgentGateway: the TCP server job agents connect to (docs/agent.md). Asio, on a thread of its
// own; no actors, so tests and the benchmark drive it with plain hooks.
//
// Each connection: the gateway sends Hello with a fresh nonce, then expects Register with
// HMAC-SHA256(secret, nonce) within the read timeout. A wrong or missing token, a frame other than
// Register first, garbage, a truncated or oversized frame, or silence longer than the read
// timeout closes that connection only (an Error frame first where it can) and is logged with the
// peer's address; the counters record why. A valid Register goes to the register hook, which
// admits the job (and returns a sink for the connection's later frames) or refuses it with a
// reason sent back as Error. After registration every frame goes to the sink, and so does the
// connection's end (closed by the peer, timed out, bad frame): AgentEvent{closed, reason}.
// Connections that have not registered yet are kept apart from registered agents: at most
// max_unauthenticated of them are open (a new one closes the oldest, so idle sockets cannot lock
// agents out), each has register_timeout_s to register, and its frames may be at most
// kMaxRegisterFrameBytes. Once max_connections agents are registered, further connections are
// refused with an Error frame at once.
//
// Binds 127.0.0.1 unless the options name another address. Thread-safety: Start/Stop from one
// thread; AgentLink may be used from any thread; hooks and sinks run on the gateway's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "agent/frame_codec.hpp"
#include "base/status.hpp"
#include "messages/agent.pb.h"

namespace troupe::agent_wire {

inline constexpr uint32_t kProtocolVersion = 1;
// The largest frame a connection may send before it has registered (a Register is far smaller).
inline constexpr size_t kMaxRegisterFrameBytes = 64 << 10;

struct GatewayOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port; port() says which
  std::string secret;
  int32_t max_connections = 64;                    // registered agents
  int32_t max_unauthenticated = 8;                 // connections not registered yet
  size_t max_frame_bytes = kDefaultMaxFrameBytes;  // capped at kMaxFrameBytesCeiling
  double read_timeout_s = 10;     // wall seconds of silence (no whole frame) before closing
  double register_timeout_s = 5;  // wall seconds a new connection has to register
  double heartbeat_s = 1;         // told to agents in Hello
  double time_scale = 1;          // told to agents in Hello
};

struct GatewayCounters {
  std::atomic<int64_t> accepted{0};
  std::atomic<int64_t> refused_full{0};  // over max_connections
  std::atomic<int64_t> evicted{0};       // unregistered, closed to make room for a newer one
  std::atomic<int64_t> auth_failed{0};   // wrong or missing token
  std::atomic<int64_t> bad_frames{0};    // garbage, oversized, truncated, out of turn
  std::atomic<int64_t> timed_out{0};     // silent past the read timeout
  std::atomic<int64_t> refused_jobs{0};  // the register hook said no
  std::atomic<int64_t> registered{0};
  std::atomic<int64_t> frames_in{0};
  std::atomic<int64_t> open{0};
  std::atomic<int64_t> unauthenticated{0};  // open and not registered
};

// What happens on a registered connection, for the job behind it.
struct AgentEvent {
  std::shared_ptr<const agent::Envelope> frame;  // set unless closed
  bool closed = false;
  std::string reason;  // why it closed
};
using AgentSink = std::function<void(AgentEvent)>;

class Session;

// The job side's handle on one registered connection. Thread-safe; harmless after the
// connection closed (frames are dropped).
class AgentLink {
 public:
  AgentLink(std::weak_ptr<Session> session, std::string peer);
  void Send(agent::Envelope frame);
  // Sends `last` (if any), then closes once everything queued is written.
  void Close(std::shared_ptr<const agent::Envelope> last);
  const std::string& peer() const { return peer_; }

 private:
  std::weak_ptr<Session> session_;
  std::string peer_;
};

struct Admission {
  Status status;  // not OK: refused, the message goes back to the agent as Error
  int64_t job_id = -1;
  AgentSink sink;
};
using RegisterHook =
    std::function<Admission(const agent::Register&, const std::shared_ptr<AgentLink>&)>;

class AgentGateway {
 public:
  AgentGateway(GatewayOptions options, RegisterHook hook);
  ~AgentGateway();
  AgentGateway(const AgentGateway&) = delete;
  AgentGateway& operator=(const AgentGateway&) = delete;

  // Binds, listens and starts the gateway's thread. Errors name the address.
  Status Start();
  uint16_t port() const;
  // Closes the listener and every connection (registered ones get Goodbye{reason}), waits up to
  // `grace` for the goodbyes to be written, then stops the thread.
  void Stop(const std::string& reason = "the run ended",
            std::chrono::milliseconds grace = std::chrono::milliseconds(1000));
  const GatewayCounters& counters() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace troupe::agent_wire
