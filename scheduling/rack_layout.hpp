// RackLayout: the racks of the fabric as placement sees them (config fabric.placement, rule
// consolidate; docs/network.md, "Placement"). With one set on the round's ledger, a job that
// must span servers takes them rack by rack: the rack that holds it leaving the fewest GPUs free
// first (best fit), then the racks with the most free GPUs; inside a rack, the servers with the
// most free GPUs first. Without one, a spread takes the servers with the most free GPUs wherever
// they are (the placement troupe always had).
//
// The wait-or-spread rule (Tiresias, NSDI '19): a job that is not running and cannot have what it
// could have on an idle cluster — one server when it fits one, else the fewest racks that hold
// it — is not placed until it has waited max_wait_s since it arrived or last ran.
#pragma once

#include <cstdint>
#include <vector>

namespace troupe::scheduling {

struct ServerShape;

struct RackLayout {
  std::vector<int32_t> rack_of_server;
  std::vector<std::vector<int32_t>> servers_of_rack;  // in index order
  std::vector<int32_t> gpus_of_rack;
  // min_racks_for[g]: the fewest racks whose GPUs add up to g (racks by size, largest first).
  std::vector<int32_t> min_racks_for;
  double max_wait_s = 0;

  // rack_of_server: one entry per server, racks numbered from 0 with none empty.
  static RackLayout Make(std::vector<int32_t> rack_of_server,
                         const std::vector<ServerShape>& servers, double max_wait_s);

  int32_t racks() const { return static_cast<int32_t>(servers_of_rack.size()); }
  // The fewest racks `gpus` GPUs need on an idle cluster (more than the cluster has: all).
  int32_t MinRacks(int32_t gpus) const;
};

}  // namespace troupe::scheduling
