// BoundedMultiplexer: CAF's default network backend, with a ceiling on what a peer can make this
// process allocate. CAF 0.17's BASP broker reads a 32-byte header, then resizes its read buffer to
// the header's payload_len (up to 4 GiB) before reading a byte of it — and does so for a peer that
// has not even shaken hands. Every plaintext connection here gets a scribe that reads each header
// first: a payload_len over kHandshakeFrameBytes in a peer's first frame that has a payload (its
// handshake), or over kFrameBytes later, closes the connection before the header reaches the
// broker, so nothing of that size is ever allocated.
//
// TLS connections (deployment credentials) do not pass here: CAF's OpenSSL module makes its own
// scribes, and completes the mutual-TLS handshake (a certificate from the deployment CA required)
// before any byte reaches the BASP broker, so only a peer of the deployment can send a header.
#pragma once

#include <caf/io/network/default_multiplexer.hpp>
#include <cstddef>

namespace troupe::network_impl {

// A peer's handshake (node id, application ids, the published actor's interface): a few hundred
// bytes; the largest message troupe sends: a PsShardFinal part (kept under 64 MiB by the shard).
inline constexpr size_t kHandshakeFrameBytes = size_t{64} << 10;
inline constexpr size_t kFrameBytes = size_t{1} << 30;

class BoundedMultiplexer : public caf::io::network::default_multiplexer {
 public:
  explicit BoundedMultiplexer(caf::actor_system* sys) : default_multiplexer(sys) {}

  caf::io::scribe_ptr new_scribe(caf::io::network::native_socket fd) override;
};

}  // namespace troupe::network_impl
