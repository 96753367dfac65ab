// The fabric of an OASiS run (docs/oasis.md, "With a fabric"): the config's fabric block over the
// run's machines, worker server h as fabric server h and PS machine k as fabric server H + k.
// Its links are owned by link-domain actors: one per rack (its servers' NICs, both directions,
// and its uplink and downlink) and, with more than one spine, one per spine (its links to the
// core). Every worker<->PS transfer crosses the links of its route (fabric/topology.hpp), each a
// LinkCalendar with the link's capacity in bytes per second: it runs at r = min(the sender's
// rate, the route's smallest capacity) and starts at the earliest moment, from when it is ready,
// at which r fits on every link of its route for the whole transfer; it arrives the route's
// latency plus oasis.link_delay_s after it ends. A transfer within one machine crosses nothing and
// arrives when the model says.
//
// Agreement across domains: the domains on a route book the transfer in route order, each at the
// earliest start >= the one it is handed that fits on its own links (dropping what the transfer
// had booked there before); when the last domain's start is the first's, every link has it at
// that start; otherwise a new pass begins at the first with the later start. Starts only grow
// and each domain's is the earliest that fits it, so for a transfer booked alone the passes end
// at the earliest common start. Transfers booked at the same time can keep finding each other's
// bookings where they just were and push each other's starts back without end; so a transfer
// that has not agreed within 16 passes takes a lock on each domain of its route, in the order of
// the domains' indices (no cycle of waits), and passes alone: a locked domain holds every other
// transfer's message until the holder is booked and tells it, then takes them in order. Every
// transfer's booking therefore ends. Emulated runs agree within fewer passes and never lock.
//
// Contract: every send goes through TellAt; deterministic in emulated mode. With room on every
// link, the sender's rate within every capacity and no latency or delay, a transfer arrives
// exactly at the message's nominal_s.
#pragma once

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <deque>
#include <memory>
#include <variant>
#include <vector>

#include "actors/oasis/oasis_nic.hpp"
#include "fabric/topology.hpp"
#include "messages/oasis_messages.hpp"
#include "runtime/run_clock.hpp"
#include "runtime/telemetry.hpp"

namespace troupe {

struct OasisFabric {
  fabric::Topology topology;
  int32_t worker_servers = 0;           // PS machine k is fabric server worker_servers + k
  double delay_s = 0;                   // oasis.link_delay_s, after the route's latency
  std::vector<int32_t> domain_of_link;  // racks first, then spines
  std::vector<int32_t> local_of_link;   // the link's index among its domain's
  std::vector<int32_t> links_of_domain;
  std::vector<caf::actor> domains;  // filled once spawned, before any transfer

  OasisFabric(fabric::Topology t, int32_t worker_servers, double delay_s);
  int32_t PsServer(int32_t ps_machine) const { return worker_servers + ps_machine; }
  // The domain a transfer from `server` enters first: its rack's.
  const caf::actor& FirstDomain(int32_t server) const {
    return domains[static_cast<size_t>(topology.RackOf(server))];
  }
};

// Spawns the domain actors and records them in `fabric->domains`. They hold that list, so they
// end only when sent an exit (the scheduler's, at the run's end).
void SpawnOasisFabric(caf::actor_system& system, const std::shared_ptr<OasisFabric>& fabric,
                      RunClock clock, Telemetry* telemetry);

struct OasisFabricState {
  using Held = std::variant<OasisGradient, OasisParams>;
  std::shared_ptr<const OasisFabric> fabric;
  int32_t index = 0;
  std::vector<LinkCalendar> links;  // by local index
  int64_t locked_by = -1;           // the transfer holding this domain's lock, if any
  std::deque<Held> held;            // what came for others while locked, in order
  std::vector<int32_t> route, owners, order;
  std::vector<LinkCalendar*> mine;
  RunClock clock;
  Telemetry* telemetry = nullptr;
  static inline const char* name = "troupe.oasis.fabric_domain";
};

caf::behavior OasisFabricDomainActor(caf::stateful_actor<OasisFabricState>* self,
                                     std::shared_ptr<const OasisFabric> fabric, int32_t index,
                                     RunClock clock, Telemetry* telemetry);

}  // namespace troupe
