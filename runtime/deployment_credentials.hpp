// The credentials one process of a deployment shows its peers and checks theirs against: mutual
// TLS through CAF's OpenSSL module. A credentials folder (scripts/make-deployment-credentials.sh)
// holds ca.pem (the deployment CA), cert.pem (this process, signed by that CA) and key.pem. A peer
// is accepted when its certificate is signed by the deployment CA; names are not compared (CAF
// 0.17 checks the chain only), so every holder of a certificate from that CA is one of the
// deployment. Without credentials, processes talk plaintext and only over loopback. OpenSSL
// reads the files in the network plugin (network/network_abi.hpp), which loading them loads.
#pragma once

#include <string>

#include "base/status.hpp"

namespace troupe {

struct DeploymentCredentials {
  std::string ca_file;
  std::string certificate_file;
  std::string key_file;
  bool enabled() const { return !certificate_file.empty(); }
};

// Reads DIR's three files and checks, before any connection exists, what CAF would otherwise
// find only on the first connection (where it throws inside its network thread): each file is
// readable PEM of its kind, the key belongs to the certificate, and the certificate is signed by
// ca.pem. The error is one line naming `where` (the flag or config field) and the file.
Status LoadDeploymentCredentials(const std::string& dir, const std::string& where,
                                 DeploymentCredentials* out);

// True for the addresses that never leave this machine: localhost, 127.0.0.0/8 and ::1.
bool IsLoopbackHost(const std::string& host);

}  // namespace troupe
