#include "actors/oasis/oasis_fabric.hpp"

#include <algorithm>
#include <deque>
#include <variant>

#include "runtime/counted_send.hpp"

namespace troupe {
namespace {

using DomainSelf = caf::stateful_actor<OasisFabricState>;
constexpr double kBytesPerGb = 1e9 / 8;
// Passes a transfer makes before it takes its domains' locks. Transfers booking at once, as when
// a real run behind the wall clock delivers many together, can push each other's starts back pass
// after pass without end; alone (locked), a transfer's passes end. Emulated runs agree within a
// few passes (at most 9 measured, docs/oasis.md), so they never lock.
constexpr int32_t kPassesUnlocked = 16;

int32_t DomainOf(const fabric::Topology& t, const fabric::Link& link) {
  switch (link.level) {
    case fabric::LinkLevel::kServerUp:
    case fabric::LinkLevel::kServerDown:
      return t.RackOf(link.owner);
    case fabric::LinkLevel::kRackUp:
    case fabric::LinkLevel::kRackDown:
      return link.owner;
    case fabric::LinkLevel::kSpineUp:
    case fabric::LinkLevel::kSpineDown:
      return t.racks() + link.owner;
  }
  return 0;
}

void Deliver(DomainSelf* self, OasisGradient& g, double at_s) {
  g.at_s = at_s;
  g.nic = caf::actor{self};  // the PS's machine's domain: the parameters' first
  const caf::actor ps = g.ps;
  TellAt(self, self->state.telemetry, self->state.clock, ps, at_s, std::move(g));
}

void Deliver(DomainSelf* self, OasisParams& p, double at_s) {
  p.at_s = at_s;
  const caf::actor worker = p.reply_to;
  TellAt(self, self->state.telemetry, self->state.clock, worker, at_s, std::move(p));
}

template <class Transfer>
void Hop(DomainSelf* self, Transfer& x);

void Replay(DomainSelf* self, OasisFabricState::Held& m) {
  std::visit([self](auto& x) { Hop(self, x); }, m);
}

// Unlocks this domain and replays, in order, what came while it was locked (a lock request
// among them locks it again, and what follows it is held again).
void Unlock(DomainSelf* self) {
  OasisFabricState& st = self->state;
  st.locked_by = -1;
  std::deque<OasisFabricState::Held> held;
  held.swap(st.held);
  for (OasisFabricState::Held& m : held) Replay(self, m);
}

// Sends `x` on to domain `d` at once (its ready time has come).
template <class Transfer>
void HandOn(DomainSelf* self, Transfer& x, int32_t d) {
  OasisFabricState& st = self->state;
  const caf::actor next = st.fabric->domains[static_cast<size_t>(d)];
  TellAt(self, st.telemetry, st.clock, next, x.ready_s, std::move(x));
}

// The domains of the route in lock order (by index), from the route's owners.
void LockOrder(OasisFabricState& st) {
  st.order = st.owners;
  std::sort(st.order.begin(), st.order.end());
  st.order.erase(std::unique(st.order.begin(), st.order.end()), st.order.end());
}

// Books this domain's part of transfer `x`'s route and hands it on: to the next domain, back to
// the first for another pass, or, once every link has it at one start, to its receiver. While
// this domain is locked by another transfer, holds `x` until it is unlocked.
template <class Transfer>
void Hop(DomainSelf* self, Transfer& x) {
  OasisFabricState& st = self->state;
  const OasisFabric& f = *st.fabric;
  OasisRoute& r = x.route;
  if (r.release) {
    Unlock(self);
    return;
  }
  if (st.locked_by >= 0 && st.locked_by != r.id) {
    st.held.emplace_back(std::move(x));
    return;
  }
  st.route.clear();
  f.topology.Route(r.from, r.to, &st.route);
  const double sender = x.gbps * kBytesPerGb;
  double rate = sender;
  st.owners.clear();
  for (int32_t l : st.route) {
    rate = std::min(rate, f.topology.link(l).capacity_bytes_per_s);
    const int32_t d = f.domain_of_link[static_cast<size_t>(l)];
    if (st.owners.empty() || st.owners.back() != d) st.owners.push_back(d);
  }
  if (st.route.empty()) {  // within one machine: crosses nothing
    Deliver(self, x, x.nominal_s);
    return;
  }
  const double latency_s = f.topology.LatencyS(r.from, r.to) + f.delay_s;
  if (!(x.gb > 0) || !(rate > 0)) {
    Deliver(self, x, x.nominal_s + latency_s);
    return;
  }
  const double seconds = x.gb * kBytesPerGb / rate;
  if (r.locks >= 0) LockOrder(st);
  if (r.locks >= 0 && static_cast<size_t>(r.locks) < st.order.size()) {  // taking the locks
    st.locked_by = r.id;  // this is domain order[locks], and it was unlocked
    ++r.locks;
    // On to the next lock, or, holding them all, a pass alone from the first domain.
    r.hop = 0;
    const bool all = static_cast<size_t>(r.locks) == st.order.size();
    HandOn(self, x, all ? st.owners.front() : st.order[static_cast<size_t>(r.locks)]);
    return;
  }
  st.mine.clear();
  for (int32_t l : st.route) {
    if (f.domain_of_link[static_cast<size_t>(l)] != st.index) continue;
    st.mine.push_back(&st.links[static_cast<size_t>(f.local_of_link[static_cast<size_t>(l)])]);
  }
  const double start = LinkCalendar::BookAll(st.mine, r.id, x.ready_s, r.at_s, seconds, rate);
  if (r.hop == 0) {
    r.pass_start_s = start;
    ++r.passes;
  }
  r.at_s = start;
  const bool last = static_cast<size_t>(r.hop) + 1 == st.owners.size();
  if (!last || start != r.pass_start_s) {
    r.hop = last ? 0 : r.hop + 1;
    if (last && r.locks < 0 && r.passes >= kPassesUnlocked) {  // take the locks, then pass alone
      LockOrder(st);
      r.locks = 0;
      HandOn(self, x, st.order.front());
      return;
    }
    HandOn(self, x, st.owners[static_cast<size_t>(r.hop)]);
    return;
  }
  // The model's own arithmetic when nothing queued or slowed it, bit for bit.
  const double end = start == x.ready_s && rate == sender ? x.nominal_s : start + seconds;
  const bool locked = r.locks >= 0;
  if (locked) {  // booked: its other domains unlock (this one below, once it is delivered)
    r.release = true;
    for (int32_t d : st.order) {
      if (d == st.index) continue;
      Transfer notice = x;
      HandOn(self, notice, d);
    }
    r.release = false;
  }
  Deliver(self, x, end + latency_s);
  if (locked) Unlock(self);
}

}  // namespace

OasisFabric::OasisFabric(fabric::Topology t, int32_t workers, double delay)
    : topology(std::move(t)), worker_servers(workers), delay_s(delay) {
  links_of_domain.assign(static_cast<size_t>(topology.racks() + topology.spines()), 0);
  for (size_t l = 0; l < topology.links(); ++l) {
    const int32_t d = DomainOf(topology, topology.link(static_cast<int32_t>(l)));
    domain_of_link.push_back(d);
    local_of_link.push_back(links_of_domain[static_cast<size_t>(d)]++);
  }
}

void SpawnOasisFabric(caf::actor_system& system, const std::shared_ptr<OasisFabric>& fabric,
                      RunClock clock, Telemetry* telemetry) {
  for (size_t d = 0; d < fabric->links_of_domain.size(); ++d) {
    fabric->domains.push_back(
        system.spawn(OasisFabricDomainActor, fabric, static_cast<int32_t>(d), clock, telemetry));
  }
}

caf::behavior OasisFabricDomainActor(DomainSelf* self, std::shared_ptr<const OasisFabric> fabric,
                                     int32_t index, RunClock clock, Telemetry* telemetry) {
  OasisFabricState& st = self->state;
  st.index = index;
  for (size_t l = 0; l < fabric->topology.links(); ++l) {
    if (fabric->domain_of_link[l] != index) continue;
    st.links.emplace_back(fabric->topology.link(static_cast<int32_t>(l)).capacity_bytes_per_s);
  }
  st.fabric = std::move(fabric);
  st.clock = clock;
  st.telemetry = telemetry;
  return {
      [=](OasisGradient& g) { Hop(self, g); },
      [=](OasisParams& p) { Hop(self, p); },
  };
}

}  // namespace troupe
