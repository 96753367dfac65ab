// The one exported symbol of troupe_network.so (network/network_abi.hpp): the table of the
// network's implementations, tagged with the ABI version and this build's id.
#include "network/network_abi.hpp"
#include "network/plugin/network_impl.hpp"

namespace {

namespace impl = troupe::network_impl;

const troupe::NetworkTable kTable{
    .header = {troupe::kNetworkAbi, TROUPE_BUILD_ID},
    .load_middleman = &impl::LoadMiddleman,
    .remote_actor = &impl::RemoteActor,
    .publish = &impl::Publish,
    .check_credentials = &impl::CheckCredentialFiles,
    .random_bytes = &impl::RandomBytes,
    .hmac_sha256 = &impl::HmacSha256,
    .equal_in_constant_time = &impl::EqualInConstantTime,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const troupe::NetworkTable* troupe_network() {
  return &kTable;
}
