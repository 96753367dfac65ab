#include "network/plugin/bounded_multiplexer.hpp"

#include <sys/socket.h>

#include <caf/io/basp/header.hpp>
#include <caf/io/network/native_socket.hpp>
#include <caf/io/network/scribe_impl.hpp>
#include <caf/make_counted.hpp>
#include <cstdint>
#include <cstdio>

namespace troupe::network_impl {
namespace {

namespace io = caf::io;

// A BASP connection's scribe that checks each header's payload_len before the broker sees it.
class BoundedScribe : public io::network::scribe_impl {
 public:
  BoundedScribe(io::network::default_multiplexer& mx, io::network::native_socket fd)
      : scribe_impl(mx, fd) {}

  bool consume(caf::execution_unit* ctx, const void* data, size_t size) override {
    if (refused_) return true;  // what the peer still sends before the end is dropped
    if (in_payload_) {
      in_payload_ = false;
      shaken_hands_ = true;
    } else if (size == io::basp::header_size) {
      // The header in CAF's network byte order: operation, two pad bytes, flags, payload_len.
      const auto* b = static_cast<const uint8_t*>(data);
      const uint32_t payload =
          (uint32_t{b[4]} << 24) | (uint32_t{b[5]} << 16) | (uint32_t{b[6]} << 8) | uint32_t{b[7]};
      const size_t limit = shaken_hands_ ? kFrameBytes : kHandshakeFrameBytes;
      if (payload > limit) return Refuse(payload, limit);
      in_payload_ = payload > 0;
    }
    return scribe_impl::consume(ctx, data, size);
  }

 private:
  // Closes both directions; the peer's further bytes are drained and dropped until the read side
  // reports the end, which tells the broker the connection is gone (as any closed connection).
  bool Refuse(uint32_t payload, size_t limit) {
    refused_ = true;
    std::fprintf(stderr,
                 "network: closed the connection from %s:%u: a frame of %u bytes, over the limit "
                 "of %zu %s\n",
                 addr().c_str(), static_cast<unsigned>(port()), payload, limit,
                 shaken_hands_ ? "bytes" : "bytes before the handshake");
    scribe_impl::configure_read(io::receive_policy::at_most(io::basp::header_size * 1024));
    ::shutdown(stream_.fd(), SHUT_RDWR);
    return true;
  }

  bool refused_ = false;
  bool in_payload_ = false;    // the next read is the payload of the header just read
  bool shaken_hands_ = false;  // a frame with a payload (the handshake) went through
};

}  // namespace

caf::io::scribe_ptr BoundedMultiplexer::new_scribe(caf::io::network::native_socket fd) {
  (void)caf::io::network::keepalive(fd, true);  // as CAF's own new_scribe
  return caf::make_counted<BoundedScribe>(*this, fd);
}

}  // namespace troupe::network_impl
