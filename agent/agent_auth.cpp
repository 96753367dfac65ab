#include "agent/agent_auth.hpp"

#include "base/input_file.hpp"
#include "base/status_macros.hpp"
#include "network/network_plugin.hpp"

namespace troupe::agent_wire {

StatusOr<std::string> MakeNonce() {
  const NetworkTable* network = nullptr;
  RETURN_IF_ERROR(LoadNetwork(&network));
  std::string nonce;
  if (Status s = network->random_bytes(kNonceBytes, &nonce); !s.ok()) {
    return Status::Internal("agent auth: " + s.message() + " for a nonce");
  }
  return nonce;
}

StatusOr<std::string> AgentToken(std::string_view secret, std::string_view nonce) {
  const NetworkTable* network = nullptr;
  RETURN_IF_ERROR(LoadNetwork(&network));
  return network->hmac_sha256(secret, nonce);
}

bool TokenMatches(std::string_view secret, std::string_view nonce, std::string_view token) {
  const NetworkTable* network = nullptr;
  if (!LoadNetwork(&network).ok()) return false;
  return network->equal_in_constant_time(network->hmac_sha256(secret, nonce), token);
}

Status ReadSecretFile(const std::string& path, std::string* secret) {
  std::string s;
  RETURN_IF_ERROR(ReadWholeFile(path, "secret_file", &s));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (s.empty()) return Status::InvalidInput(path + ": the agent secret file is empty");
  *secret = std::move(s);
  return Status::Ok();
}

}  // namespace troupe::agent_wire
