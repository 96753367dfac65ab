// The fabric's topology: servers in racks under top-of-rack switches, racks under spines, spines
// (when more than one) under a core (config::Fabric, docs/network.md). Each link is one direction
// of a physical link, with a capacity in bytes per second and a one-way latency, so a flow up a
// rack's uplink never competes with one coming down it.
//
// Contract: Build checks the config against the cluster's server count and returns one
// InvalidInput line naming the field (`fabric.rack[2].last_server: ...`) for a fabric that leaves
// a server out or holds one twice, a rack under no spine or under a spine it does not name, a
// spine named twice, or a capacity that is not positive. A built topology is immutable; Route is
// deterministic (a tree has one path between two servers) and allocates nothing once `out` has
// grown.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status_or.hpp"
#include "config/config.pb.h"

namespace troupe::fabric {

enum class LinkLevel : int8_t {
  kServerUp,    // a server's NIC toward its rack switch
  kServerDown,  // the rack switch toward a server's NIC
  kRackUp,      // a rack's uplink toward its spine
  kRackDown,
  kSpineUp,  // a spine's uplink toward the core (only with more than one spine)
  kSpineDown,
};

struct Link {
  LinkLevel level = LinkLevel::kServerUp;
  int32_t owner = 0;  // the server, rack or spine index whose link it is
  double capacity_bytes_per_s = 0;
  double latency_s = 0;
};

class Topology {
 public:
  static StatusOr<Topology> Build(const config::Fabric& fabric, int32_t servers);

  int32_t servers() const;
  int32_t racks() const;
  int32_t spines() const;
  int32_t RackOf(int32_t server) const;
  int32_t SpineOf(int32_t rack) const;
  const std::string& RackName(int32_t rack) const;
  const std::string& SpineName(int32_t spine) const;

  size_t links() const { return links_.size(); }
  const Link& link(int32_t index) const { return links_[static_cast<size_t>(index)]; }
  // "server3.up", "rack1.down", "spine0.up" (rack and spine by their names).
  std::string LinkName(int32_t index) const;
  std::vector<double> Capacities() const;  // bytes per second, by link index

  // Appends to `out` the links a flow from server `from` to server `to` crosses, in order;
  // nothing when from == to.
  void Route(int32_t from, int32_t to, std::vector<int32_t>* out) const;
  // The one-way latency from `from` to `to`: the sum of the latencies of Route's links.
  double LatencyS(int32_t from, int32_t to) const;
  // The GPU interconnect inside a server, per GPU and direction (bytes per second).
  double intra_server_bytes_per_s() const { return intra_server_bytes_per_s_; }

 private:
  std::vector<Link> links_;
  std::vector<int32_t> rack_of_server_, spine_of_rack_;
  std::vector<std::string> rack_names_, spine_names_;
  double intra_server_bytes_per_s_ = 0;
  // Link indices by owner: server_up_[s], rack_up_[r], spine_up_[p]; each down link is up + 1.
  std::vector<int32_t> server_up_, rack_up_, spine_up_;
};

}  // namespace troupe::fabric
