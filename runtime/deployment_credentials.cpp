#include "runtime/deployment_credentials.hpp"

#include <arpa/inet.h>

#include "base/status_macros.hpp"
#include "network/network_plugin.hpp"

namespace troupe {

Status LoadDeploymentCredentials(const std::string& dir, const std::string& where,
                                 DeploymentCredentials* out) {
  const std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  DeploymentCredentials c{base + "ca.pem", base + "cert.pem", base + "key.pem"};
  const NetworkTable* network = nullptr;
  RETURN_IF_ERROR(LoadNetwork(&network));
  RETURN_IF_ERROR(network->check_credentials(c.ca_file, c.certificate_file, c.key_file, where));
  *out = std::move(c);
  return Status::Ok();
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  const std::string bare = host.size() > 2 && host.front() == '[' && host.back() == ']'
                               ? host.substr(1, host.size() - 2)
                               : host;
  return inet_pton(AF_INET6, bare.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace troupe
