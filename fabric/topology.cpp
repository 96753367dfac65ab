// Building the tree from config::Fabric: racks (explicit ranges, servers_per_rack, or one rack of
// every server), spines (explicit and named by the racks, racks_per_spine, or one spine), then
// the links: two per server, two per rack, and two per spine when there is more than one spine
// (a core above them); each down link right after its up link.
#include "fabric/topology.hpp"

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "base/status_macros.hpp"

namespace troupe::fabric {

namespace {

constexpr double kBytesPerGbit = 1e9 / 8;
constexpr double kSecondsPerMicrosecond = 1e-6;

std::string RackField(int index, const char* field) {
  return "fabric.rack[" + std::to_string(index) + "]." + field;
}

std::string Number(double value) {  // as written: "0.5", "-1", not std::to_string's "0.500000"
  std::ostringstream out;
  out << value;
  return out.str();
}

Status Positive(const std::string& field, double value) {
  if (value > 0 && std::isfinite(value)) return Status::Ok();
  return Status::InvalidInput(field + ": must be > 0, got " + Number(value));
}

Status NotNegative(const std::string& field, double value) {
  if (value >= 0 && std::isfinite(value)) return Status::Ok();
  return Status::InvalidInput(field + ": must be >= 0, got " + Number(value));
}

// The rack of each server, from explicit ranges; every server in exactly one rack.
Status RacksFromRanges(const config::Fabric& fabric, int32_t servers,
                       std::vector<int32_t>* rack_of) {
  rack_of->assign(static_cast<size_t>(servers), -1);
  for (int r = 0; r < fabric.rack_size(); ++r) {
    const config::FabricRack& rack = fabric.rack(r);
    if (!rack.has_first_server())
      return Status::InvalidInput(RackField(r, "first_server") + ": missing");
    if (!rack.has_last_server())
      return Status::InvalidInput(RackField(r, "last_server") + ": missing");
    int32_t first = rack.first_server(), last = rack.last_server();
    if (first < 0 || first > last) {
      return Status::InvalidInput(RackField(r, "first_server") + ": " + std::to_string(first) +
                                  " is not in 0.." + std::to_string(last) + " (last_server)");
    }
    if (last >= servers) {
      return Status::InvalidInput(RackField(r, "last_server") + ": server " + std::to_string(last) +
                                  " is past the cluster's " + std::to_string(servers) + " servers");
    }
    for (int32_t s = first; s <= last; ++s) {
      int32_t other = (*rack_of)[static_cast<size_t>(s)];
      if (other >= 0) {
        return Status::InvalidInput(RackField(r, s == first ? "first_server" : "last_server") +
                                    ": server " + std::to_string(s) + " is in rack " +
                                    std::to_string(other) + " too");
      }
      (*rack_of)[static_cast<size_t>(s)] = r;
    }
  }
  for (int32_t s = 0; s < servers; ++s) {
    if ((*rack_of)[static_cast<size_t>(s)] < 0) {
      return Status::InvalidInput("fabric.rack: server " + std::to_string(s) + " is in no rack");
    }
  }
  return Status::Ok();
}

Status AssignRacks(const config::Fabric& fabric, int32_t servers, std::vector<int32_t>* rack_of,
                   int32_t* racks) {
  if (fabric.rack_size() > 0 && fabric.has_servers_per_rack()) {
    return Status::InvalidInput(
        "fabric.servers_per_rack: give racks or servers_per_rack, not both");
  }
  if (fabric.rack_size() > 0) {
    *racks = fabric.rack_size();
    return RacksFromRanges(fabric, servers, rack_of);
  }
  int32_t per_rack = fabric.has_servers_per_rack() ? fabric.servers_per_rack() : servers;
  if (per_rack <= 0) {
    return Status::InvalidInput("fabric.servers_per_rack: must be > 0, got " +
                                std::to_string(per_rack));
  }
  rack_of->resize(static_cast<size_t>(servers));
  for (int32_t s = 0; s < servers; ++s) (*rack_of)[static_cast<size_t>(s)] = s / per_rack;
  *racks = (servers + per_rack - 1) / per_rack;
  return Status::Ok();
}

// Each rack's name ("" : rack<index>); no name twice.
Status NameRacks(const config::Fabric& fabric, int32_t racks, std::vector<std::string>* names) {
  std::map<std::string, int> seen;
  for (int r = 0; r < racks; ++r) {
    std::string name = r < fabric.rack_size() ? fabric.rack(r).name() : "";
    if (name.empty()) name = "rack" + std::to_string(r);
    auto [it, fresh] = seen.emplace(name, r);
    if (!fresh) {
      return Status::InvalidInput(RackField(r, "name") + ": '" + name + "' names rack " +
                                  std::to_string(it->second) + " too");
    }
    names->push_back(std::move(name));
  }
  return Status::Ok();
}

// Explicit spines: their names, and the spine each rack names.
Status SpinesByName(const config::Fabric& fabric, std::vector<int32_t>* spine_of,
                    std::vector<std::string>* names) {
  std::map<std::string, int32_t> index;
  for (int p = 0; p < fabric.spine_size(); ++p) {
    const std::string& name = fabric.spine(p).name();
    std::string field = "fabric.spine[" + std::to_string(p) + "].name";
    if (name.empty()) return Status::InvalidInput(field + ": missing (racks name their spine)");
    auto [it, fresh] = index.emplace(name, p);
    if (!fresh) {
      return Status::InvalidInput(field + ": spine '" + name + "' is named twice (spine[" +
                                  std::to_string(it->second) + "])");
    }
    names->push_back(name);
  }
  for (int r = 0; r < static_cast<int>(spine_of->size()); ++r) {
    const std::string name = r < fabric.rack_size() ? fabric.rack(r).spine() : "";
    if (name.empty()) {
      return Status::InvalidInput(RackField(r, "spine") +
                                  ": the rack is under no spine (the fabric lists spines)");
    }
    auto it = index.find(name);
    if (it == index.end()) {
      return Status::InvalidInput(RackField(r, "spine") + ": no spine is named '" + name + "'");
    }
    (*spine_of)[static_cast<size_t>(r)] = it->second;
  }
  return Status::Ok();
}

Status AssignSpines(const config::Fabric& fabric, int32_t racks, std::vector<int32_t>* spine_of,
                    std::vector<std::string>* names) {
  spine_of->assign(static_cast<size_t>(racks), 0);
  if (fabric.spine_size() > 0 && fabric.has_racks_per_spine()) {
    return Status::InvalidInput("fabric.racks_per_spine: give spines or racks_per_spine, not both");
  }
  if (fabric.spine_size() > 0) {
    if (fabric.rack_size() == 0) {
      return Status::InvalidInput(
          "fabric.spine: spines need explicit racks (fabric.rack) that name them");
    }
    return SpinesByName(fabric, spine_of, names);
  }
  for (int r = 0; r < fabric.rack_size(); ++r) {
    if (fabric.rack(r).has_spine()) {
      return Status::InvalidInput(RackField(r, "spine") + ": no spine is named '" +
                                  fabric.rack(r).spine() + "' (the fabric lists no spines)");
    }
  }
  int32_t per_spine = fabric.has_racks_per_spine() ? fabric.racks_per_spine() : racks;
  if (per_spine <= 0) {
    return Status::InvalidInput("fabric.racks_per_spine: must be > 0, got " +
                                std::to_string(per_spine));
  }
  for (int32_t r = 0; r < racks; ++r) (*spine_of)[static_cast<size_t>(r)] = r / per_spine;
  int32_t spines = (racks + per_spine - 1) / per_spine;
  for (int32_t p = 0; p < spines; ++p) names->push_back("spine" + std::to_string(p));
  return Status::Ok();
}

// Every rate and latency the links are built from, checked.
Status CheckRates(const config::Fabric& fabric) {
  RETURN_IF_ERROR(Positive("fabric.server_nic_gbps", fabric.server_nic_gbps()));
  RETURN_IF_ERROR(Positive("fabric.intra_server_gbps", fabric.intra_server_gbps()));
  RETURN_IF_ERROR(Positive("fabric.tor_oversubscription", fabric.tor_oversubscription()));
  RETURN_IF_ERROR(Positive("fabric.spine_oversubscription", fabric.spine_oversubscription()));
  if (fabric.has_tor_uplink_gbps()) {
    RETURN_IF_ERROR(Positive("fabric.tor_uplink_gbps", fabric.tor_uplink_gbps()));
  }
  if (fabric.has_spine_uplink_gbps()) {
    RETURN_IF_ERROR(Positive("fabric.spine_uplink_gbps", fabric.spine_uplink_gbps()));
  }
  for (int r = 0; r < fabric.rack_size(); ++r) {
    if (fabric.rack(r).has_uplink_gbps()) {
      RETURN_IF_ERROR(Positive(RackField(r, "uplink_gbps"), fabric.rack(r).uplink_gbps()));
    }
  }
  for (int p = 0; p < fabric.spine_size(); ++p) {
    if (fabric.spine(p).has_uplink_gbps()) {
      RETURN_IF_ERROR(Positive("fabric.spine[" + std::to_string(p) + "].uplink_gbps",
                               fabric.spine(p).uplink_gbps()));
    }
  }
  RETURN_IF_ERROR(NotNegative("fabric.nic_latency_us", fabric.nic_latency_us()));
  RETURN_IF_ERROR(NotNegative("fabric.tor_latency_us", fabric.tor_latency_us()));
  return NotNegative("fabric.spine_latency_us", fabric.spine_latency_us());
}

// Each rack's uplink (bytes per second): its own, the fabric's, or its servers' NICs divided by
// tor_oversubscription.
std::vector<double> RackUplinks(const config::Fabric& fabric, const std::vector<int32_t>& rack_of,
                                int32_t racks) {
  std::vector<double> uplink(static_cast<size_t>(racks), 0);
  for (int32_t rack : rack_of) uplink[static_cast<size_t>(rack)] += fabric.server_nic_gbps();
  for (int32_t r = 0; r < racks; ++r) {
    double gbps = uplink[static_cast<size_t>(r)] / fabric.tor_oversubscription();
    if (fabric.has_tor_uplink_gbps()) gbps = fabric.tor_uplink_gbps();
    if (r < fabric.rack_size() && fabric.rack(r).has_uplink_gbps()) {
      gbps = fabric.rack(r).uplink_gbps();
    }
    uplink[static_cast<size_t>(r)] = gbps * kBytesPerGbit;
  }
  return uplink;
}

// Each spine's uplink to the core (bytes per second), likewise from its racks' uplinks.
StatusOr<std::vector<double>> SpineUplinks(const config::Fabric& fabric,
                                           const std::vector<double>& rack_uplink,
                                           const std::vector<int32_t>& spine_of,
                                           const std::vector<std::string>& names) {
  std::vector<double> uplink(names.size(), 0);
  for (size_t r = 0; r < spine_of.size(); ++r) {
    uplink[static_cast<size_t>(spine_of[r])] += rack_uplink[r] / fabric.spine_oversubscription();
  }
  for (size_t p = 0; p < names.size(); ++p) {
    auto index = static_cast<int>(p);
    if (fabric.has_spine_uplink_gbps()) uplink[p] = fabric.spine_uplink_gbps() * kBytesPerGbit;
    if (index < fabric.spine_size() && fabric.spine(index).has_uplink_gbps()) {
      uplink[p] = fabric.spine(index).uplink_gbps() * kBytesPerGbit;
    }
    if (!(uplink[p] > 0)) {
      return Status::InvalidInput("fabric.spine[" + std::to_string(p) + "]: spine '" + names[p] +
                                  "' has no racks, so its uplink works out to 0");
    }
  }
  return uplink;
}

}  // namespace

StatusOr<Topology> Topology::Build(const config::Fabric& fabric, int32_t servers) {
  if (servers <= 0) {
    return Status::InvalidInput("fabric: the cluster has no servers (" + std::to_string(servers) +
                                ")");
  }
  RETURN_IF_ERROR(CheckRates(fabric));
  Topology topology;
  int32_t racks = 0;
  RETURN_IF_ERROR(AssignRacks(fabric, servers, &topology.rack_of_server_, &racks));
  RETURN_IF_ERROR(NameRacks(fabric, racks, &topology.rack_names_));
  RETURN_IF_ERROR(AssignSpines(fabric, racks, &topology.spine_of_rack_, &topology.spine_names_));
  std::vector<double> rack_uplink = RackUplinks(fabric, topology.rack_of_server_, racks);
  std::vector<double> spine_uplink;
  if (topology.spine_names_.size() > 1) {
    ASSIGN_OR_RETURN(spine_uplink, SpineUplinks(fabric, rack_uplink, topology.spine_of_rack_,
                                                topology.spine_names_));
  }

  auto add_pair = [&topology](LinkLevel up, int32_t owner, double capacity, double latency_us) {
    auto index = static_cast<int32_t>(topology.links_.size());
    double latency_s = latency_us * kSecondsPerMicrosecond;
    topology.links_.push_back({up, owner, capacity, latency_s});
    auto down = static_cast<LinkLevel>(static_cast<int8_t>(up) + 1);
    topology.links_.push_back({down, owner, capacity, latency_s});
    return index;
  };
  double nic = fabric.server_nic_gbps() * kBytesPerGbit;
  for (int32_t s = 0; s < servers; ++s) {
    topology.server_up_.push_back(add_pair(LinkLevel::kServerUp, s, nic, fabric.nic_latency_us()));
  }
  for (int32_t r = 0; r < racks; ++r) {
    topology.rack_up_.push_back(add_pair(LinkLevel::kRackUp, r, rack_uplink[static_cast<size_t>(r)],
                                         fabric.tor_latency_us()));
  }
  for (size_t p = 0; p < spine_uplink.size(); ++p) {
    topology.spine_up_.push_back(add_pair(LinkLevel::kSpineUp, static_cast<int32_t>(p),
                                          spine_uplink[p], fabric.spine_latency_us()));
  }
  topology.intra_server_bytes_per_s_ = fabric.intra_server_gbps() * kBytesPerGbit;
  return topology;
}

int32_t Topology::servers() const { return static_cast<int32_t>(rack_of_server_.size()); }
int32_t Topology::racks() const { return static_cast<int32_t>(rack_names_.size()); }
int32_t Topology::spines() const { return static_cast<int32_t>(spine_names_.size()); }
int32_t Topology::RackOf(int32_t server) const {
  return rack_of_server_[static_cast<size_t>(server)];
}
int32_t Topology::SpineOf(int32_t rack) const { return spine_of_rack_[static_cast<size_t>(rack)]; }
const std::string& Topology::RackName(int32_t rack) const {
  return rack_names_[static_cast<size_t>(rack)];
}
const std::string& Topology::SpineName(int32_t spine) const {
  return spine_names_[static_cast<size_t>(spine)];
}

std::string Topology::LinkName(int32_t index) const {
  const Link& l = link(index);
  switch (l.level) {
    case LinkLevel::kServerUp:
      return "server" + std::to_string(l.owner) + ".up";
    case LinkLevel::kServerDown:
      return "server" + std::to_string(l.owner) + ".down";
    case LinkLevel::kRackUp:
      return RackName(l.owner) + ".up";
    case LinkLevel::kRackDown:
      return RackName(l.owner) + ".down";
    case LinkLevel::kSpineUp:
      return SpineName(l.owner) + ".up";
    case LinkLevel::kSpineDown:
      return SpineName(l.owner) + ".down";
  }
  return "link" + std::to_string(index);
}

std::vector<double> Topology::Capacities() const {
  std::vector<double> capacities;
  capacities.reserve(links_.size());
  for (const Link& l : links_) capacities.push_back(l.capacity_bytes_per_s);
  return capacities;
}

void Topology::Route(int32_t from, int32_t to, std::vector<int32_t>* out) const {
  if (from == to) return;
  int32_t from_rack = RackOf(from), to_rack = RackOf(to);
  out->push_back(server_up_[static_cast<size_t>(from)]);
  if (from_rack != to_rack) {
    int32_t from_spine = SpineOf(from_rack), to_spine = SpineOf(to_rack);
    out->push_back(rack_up_[static_cast<size_t>(from_rack)]);
    if (from_spine != to_spine) {
      out->push_back(spine_up_[static_cast<size_t>(from_spine)]);
      out->push_back(spine_up_[static_cast<size_t>(to_spine)] + 1);
    }
    out->push_back(rack_up_[static_cast<size_t>(to_rack)] + 1);
  }
  out->push_back(server_up_[static_cast<size_t>(to)] + 1);
}

double Topology::LatencyS(int32_t from, int32_t to) const {
  if (from == to) return 0;
  int32_t from_rack = RackOf(from), to_rack = RackOf(to);
  double latency = link(server_up_[static_cast<size_t>(from)]).latency_s +
                   link(server_up_[static_cast<size_t>(to)] + 1).latency_s;
  if (from_rack != to_rack) {
    latency += link(rack_up_[static_cast<size_t>(from_rack)]).latency_s +
               link(rack_up_[static_cast<size_t>(to_rack)] + 1).latency_s;
    int32_t from_spine = SpineOf(from_rack), to_spine = SpineOf(to_rack);
    if (from_spine != to_spine) {
      latency += link(spine_up_[static_cast<size_t>(from_spine)]).latency_s +
                 link(spine_up_[static_cast<size_t>(to_spine)] + 1).latency_s;
    }
  }
  return latency;
}

}  // namespace troupe::fabric
