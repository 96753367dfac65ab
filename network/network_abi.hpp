// The network plugin's entry point: the one symbol troupe looks up after dlopen() of
// troupe_network.so (built from network/plugin/). Everything that needs CAF's middleman, CAF's
// OpenSSL module or OpenSSL itself — connecting to and publishing `troupe node`s, mutual TLS, the
// deployment's certificate checks, the agents' HMAC — is reached through this table, so a run
// that never leaves its process (every emulated run, `troupe validate` of one, the tests of the
// rest) maps none of those libraries.
//
// The table passes C++ and CAF types, so the plugin must come from the same build of troupe as
// the program: raise kNetworkAbi whenever the table or a type it passes changes
// (base/plugin_loader.hpp checks it and the build id before any entry is called).
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

#include "base/plugin_loader.hpp"
#include "base/status.hpp"

namespace troupe {

inline constexpr uint32_t kNetworkAbi = 1;
inline constexpr char kNetworkEntry[] = "troupe_network";

struct NetworkTable {
  PluginHeader header;
  // Loads CAF's middleman into `config` and, with `tls`, CAF's OpenSSL manager, which then takes
  // the certificate, key and CA files from `config`'s openssl_* fields.
  void (*load_middleman)(caf::actor_system_config& config, bool tls);
  // One attempt to reach the actor published at host:port, through the OpenSSL manager when the
  // system has one; an error after `wait` without the peer's handshake.
  caf::expected<caf::actor> (*remote_actor)(caf::actor_system& sys, const std::string& host,
                                            uint16_t port, caf::duration wait);
  // Publishes `actor` on host:port (0: an ephemeral port), with TLS when the system has the
  // OpenSSL manager; the port bound.
  caf::expected<uint16_t> (*publish)(caf::actor_system& sys, const caf::actor& actor,
                                     const std::string& host, uint16_t port);
  // The PEM checks of a deployment's three credential files (runtime/deployment_credentials.hpp):
  // one line naming `where` and the file.
  Status (*check_credentials)(const std::string& ca_file, const std::string& certificate_file,
                              const std::string& key_file, const std::string& where);
  // For agent authentication (agent/agent_auth.hpp): `count` bytes from OpenSSL's CSPRNG,
  // HMAC-SHA256, and a comparison whose time does not depend on where the bytes differ.
  Status (*random_bytes)(size_t count, std::string* out);
  std::string (*hmac_sha256)(std::string_view key, std::string_view message);
  bool (*equal_in_constant_time)(std::string_view a, std::string_view b);
};

}  // namespace troupe
