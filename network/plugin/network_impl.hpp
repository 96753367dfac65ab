// What troupe_network.so implements: the entries of its table (network/network_abi.hpp says what
// each does). Built into the plugin only; the program reaches these through the table.
#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/duration.hpp>
#include <caf/expected.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.hpp"

namespace troupe::network_impl {

// middleman_link.cpp: CAF's middleman and OpenSSL module.
void LoadMiddleman(caf::actor_system_config& config, bool tls);
caf::expected<caf::actor> RemoteActor(caf::actor_system& sys, const std::string& host,
                                      uint16_t port, caf::duration wait);
caf::expected<uint16_t> Publish(caf::actor_system& sys, const caf::actor& actor,
                                const std::string& host, uint16_t port);

// credential_check.cpp
Status CheckCredentialFiles(const std::string& ca_file, const std::string& certificate_file,
                            const std::string& key_file, const std::string& where);

// agent_crypto.cpp: OpenSSL's libcrypto.
Status RandomBytes(size_t count, std::string* out);
std::string HmacSha256(std::string_view key, std::string_view message);
bool EqualInConstantTime(std::string_view a, std::string_view b);

}  // namespace troupe::network_impl
