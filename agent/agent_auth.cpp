#include "agent/agent_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <fstream>
#include <sstream>

namespace troupe::agent_wire {

StatusOr<std::string> MakeNonce() {
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), kNonceBytes) != 1) {
    return Status::Internal("agent auth: the random generator has no entropy for a nonce");
  }
  return nonce;
}

std::string AgentToken(std::string_view secret, std::string_view nonce) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(nonce.data()), nonce.size(), digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

bool TokenMatches(std::string_view secret, std::string_view nonce, std::string_view token) {
  const std::string expected = AgentToken(secret, nonce);
  if (token.size() != expected.size()) return false;
  return CRYPTO_memcmp(expected.data(), token.data(), expected.size()) == 0;
}

Status ReadSecretFile(const std::string& path, std::string* secret) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot read the agent secret file");
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (s.empty()) return Status::InvalidInput(path + ": the agent secret file is empty");
  *secret = std::move(s);
  return Status::Ok();
}

}  // namespace troupe::agent_wire
