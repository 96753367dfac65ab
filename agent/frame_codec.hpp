// The agent protocol's framing (messages/agent.proto): a 4-byte big-endian payload length, then
// that many bytes of one serialized agent::Envelope.
//
// Pure code, no I/O and no actors, so that the gateway, the tests, the benchmark and the fuzzer
// (tests/fuzz/) share it. FrameDecoder takes bytes as they arrive from a socket in any split and
// yields whole envelopes; any bad input — a length over the limit, a zero length, a payload that
// does not parse, an envelope with no body — is an InvalidInput Status naming the frame (its
// index on the connection and byte offset) and what is wrong. After an error the decoder refuses
// everything: the connection is to be closed, never resynchronised.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.hpp"
#include "base/status_or.hpp"
#include "messages/agent.pb.h"

namespace troupe::agent_wire {

inline constexpr size_t kFrameHeaderBytes = 4;
inline constexpr size_t kDefaultMaxFrameBytes = 1 << 20;  // 1 MiB of payload
// No decoder buffers a frame larger than this, whatever limit it is given: a length prefix is
// the peer's word, and memory is ours.
inline constexpr size_t kMaxFrameBytesCeiling = 64 << 20;

// The frame of `envelope`: header and payload. Fails only when the payload is over `max_bytes`.
Status EncodeFrame(const agent::Envelope& envelope, std::string* frame,
                   size_t max_bytes = kDefaultMaxFrameBytes);
// As EncodeFrame, returning the frame; the default limit is the largest frame any decoder accepts.
StatusOr<std::string> Frame(const agent::Envelope& envelope,
                            size_t max_bytes = kMaxFrameBytesCeiling);

// The name of an envelope's body ("register", "heartbeat", ...), "empty" when it has none.
std::string_view BodyName(const agent::Envelope& envelope);

class FrameDecoder {
 public:
  // Frames over max_frame_bytes (at most kMaxFrameBytesCeiling) are refused.
  explicit FrameDecoder(size_t max_frame_bytes = kDefaultMaxFrameBytes)
      : max_frame_bytes_(std::min(max_frame_bytes, kMaxFrameBytesCeiling)) {}

  // A new limit for the frames after those already decoded (the gateway allows larger frames
  // once a connection has authenticated).
  void set_max_frame_bytes(size_t max_frame_bytes) {
    max_frame_bytes_ = std::min(max_frame_bytes, kMaxFrameBytesCeiling);
  }
  size_t max_frame_bytes() const { return max_frame_bytes_; }

  // Appends `bytes` and moves every whole frame now buffered into `out` (appended). Returns the
  // first error; frames decoded before it are still in `out`.
  Status Feed(std::string_view bytes, std::vector<agent::Envelope>* out);

  // Bytes of an incomplete frame waiting for the rest (a connection closed with some pending
  // was cut mid-frame: a truncated frame).
  size_t pending_bytes() const { return buffer_.size() - consumed_; }
  uint64_t frames_decoded() const { return frames_; }
  bool failed() const { return !error_.ok(); }

 private:
  size_t max_frame_bytes_;
  std::string buffer_;
  size_t consumed_ = 0;  // bytes of buffer_ already decoded
  uint64_t frames_ = 0;  // whole frames decoded so far
  uint64_t offset_ = 0;  // stream offset of buffer_[0]
  Status error_;
};

// Decodes exactly one frame that must fill `bytes` (tests and tools): trailing or missing bytes
// are errors.
Status DecodeOneFrame(std::string_view bytes, size_t max_frame_bytes, agent::Envelope* out);

}  // namespace troupe::agent_wire
