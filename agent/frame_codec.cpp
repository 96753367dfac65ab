#include "agent/frame_codec.hpp"

#include <utility>

#include "base/status_macros.hpp"

namespace troupe::agent_wire {
namespace {

uint32_t ReadBigEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (uint32_t{u[0]} << 24) | (uint32_t{u[1]} << 16) | (uint32_t{u[2]} << 8) | uint32_t{u[3]};
}

void AppendBigEndian32(uint32_t v, std::string* out) {
  out->push_back(static_cast<char>((v >> 24) & 0xff));
  out->push_back(static_cast<char>((v >> 16) & 0xff));
  out->push_back(static_cast<char>((v >> 8) & 0xff));
  out->push_back(static_cast<char>(v & 0xff));
}

}  // namespace

Status EncodeFrame(const agent::Envelope& envelope, std::string* frame, size_t max_bytes) {
  const size_t size = envelope.ByteSizeLong();
  if (size > max_bytes) {
    return Status::InvalidInput("frame of " + std::string(BodyName(envelope)) + ": " +
                                std::to_string(size) + " bytes, over the limit of " +
                                std::to_string(max_bytes));
  }
  frame->clear();
  frame->reserve(kFrameHeaderBytes + size);
  AppendBigEndian32(static_cast<uint32_t>(size), frame);
  envelope.AppendToString(frame);
  return Status::Ok();
}

StatusOr<std::string> Frame(const agent::Envelope& envelope, size_t max_bytes) {
  std::string frame;
  RETURN_IF_ERROR(EncodeFrame(envelope, &frame, max_bytes));
  return frame;
}

std::string_view BodyName(const agent::Envelope& envelope) {
  switch (envelope.body_case()) {
    case agent::Envelope::kHello:
      return "hello";
    case agent::Envelope::kRegister:
      return "register";
    case agent::Envelope::kRegistered:
      return "registered";
    case agent::Envelope::kLeaseGrant:
      return "lease_grant";
    case agent::Envelope::kLeaseEnd:
      return "lease_end";
    case agent::Envelope::kProgress:
      return "progress";
    case agent::Envelope::kCheckpointDone:
      return "checkpoint_done";
    case agent::Envelope::kFinished:
      return "finished";
    case agent::Envelope::kHeartbeat:
      return "heartbeat";
    case agent::Envelope::kError:
      return "error";
    case agent::Envelope::kGoodbye:
      return "goodbye";
    case agent::Envelope::BODY_NOT_SET:
      break;
  }
  return "empty";
}

Status FrameDecoder::Feed(std::string_view bytes, std::vector<agent::Envelope>* out) {
  if (!error_.ok()) return error_;
  buffer_.append(bytes.data(), bytes.size());
  while (buffer_.size() - consumed_ >= kFrameHeaderBytes) {
    const uint32_t length = ReadBigEndian32(buffer_.data() + consumed_);
    const std::string where =
        "frame " + std::to_string(frames_) + " (byte " + std::to_string(offset_ + consumed_) + ")";
    if (length > max_frame_bytes_) {
      error_ = Status::InvalidInput(where + ": length " + std::to_string(length) +
                                    " is over the limit of " + std::to_string(max_frame_bytes_));
      return error_;
    }
    if (length == 0) {
      error_ = Status::InvalidInput(where + ": length 0 (an envelope always has a body)");
      return error_;
    }
    if (buffer_.size() - consumed_ - kFrameHeaderBytes < length) break;  // the rest is coming
    agent::Envelope envelope;
    const char* payload = buffer_.data() + consumed_ + kFrameHeaderBytes;
    if (!envelope.ParseFromArray(payload, static_cast<int>(length))) {
      error_ = Status::InvalidInput(where + ": " + std::to_string(length) +
                                    " bytes that are not an agent envelope");
      return error_;
    }
    if (envelope.body_case() == agent::Envelope::BODY_NOT_SET) {
      error_ = Status::InvalidInput(where + ": an envelope with no known body");
      return error_;
    }
    out->push_back(std::move(envelope));
    consumed_ += kFrameHeaderBytes + length;
    ++frames_;
  }
  // Drop decoded bytes once they dominate the buffer, so a long session does not grow it.
  if (consumed_ > 0 && consumed_ >= buffer_.size() / 2) {
    buffer_.erase(0, consumed_);
    offset_ += consumed_;
    consumed_ = 0;
  }
  return Status::Ok();
}

Status DecodeOneFrame(std::string_view bytes, size_t max_frame_bytes, agent::Envelope* out) {
  FrameDecoder decoder(max_frame_bytes);
  std::vector<agent::Envelope> frames;
  RETURN_IF_ERROR(decoder.Feed(bytes, &frames));
  if (frames.empty()) {
    return Status::InvalidInput("truncated frame: " + std::to_string(decoder.pending_bytes()) +
                                " bytes of an incomplete frame");
  }
  if (frames.size() > 1 || decoder.pending_bytes() > 0) {
    return Status::InvalidInput("bytes after the first frame");
  }
  *out = std::move(frames.front());
  return Status::Ok();
}

}  // namespace troupe::agent_wire
