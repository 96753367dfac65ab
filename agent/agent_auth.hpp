// Authentication of agent connections: the gateway sends a fresh random nonce in Hello; the agent
// answers with HMAC-SHA256(shared secret, nonce) in Register. The secret never crosses the wire,
// and a recorded token is useless on another connection (another nonce). OpenSSL's libcrypto
// computes the HMAC and draws the nonce, through the network plugin (network/network_abi.hpp),
// which these functions load: a plugin that cannot be loaded is their error. Tokens are compared
// in constant time.
#pragma once

#include <string>
#include <string_view>

#include "base/status.hpp"
#include "base/status_or.hpp"

namespace troupe::agent_wire {

inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kTokenBytes = 32;  // SHA-256

// kNonceBytes bytes from OpenSSL's CSPRNG; Internal when it has no entropy to give (the gateway
// must not run with predictable nonces) or when the network plugin cannot be loaded.
StatusOr<std::string> MakeNonce();
// HMAC-SHA256(secret, nonce), raw bytes.
StatusOr<std::string> AgentToken(std::string_view secret, std::string_view nonce);
// True when `token` is the token of `nonce` under `secret`, compared in constant time. False when
// the network plugin cannot be loaded (MakeNonce, which made the nonce, said why).
bool TokenMatches(std::string_view secret, std::string_view nonce, std::string_view token);

// Reads a shared secret from a file (one line; trailing newlines and spaces are dropped). Errors
// name the file: missing, unreadable, not a regular file (base/input_file.hpp), or empty.
Status ReadSecretFile(const std::string& path, std::string* secret);

}  // namespace troupe::agent_wire
