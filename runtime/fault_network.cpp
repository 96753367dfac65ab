#include "runtime/fault_network.hpp"

#include <cmath>

namespace troupe {

FaultNetwork::FaultNetwork(const FaultPlan& plan, uint64_t seed, RunClock clock)
    : clock_(clock), rng_(seed ^ 0x6e6574776f726bull) {
  for (const FaultEvent& e : plan.events) {
    switch (e.kind) {
      case FaultKind::kPartition:
      case FaultKind::kDrop:
      case FaultKind::kDelay:
      case FaultKind::kDuplicate:
        events_.push_back(e);
        break;
      default:
        break;
    }
  }
}

void FaultNetwork::Register(caf::actor_id id, EndpointKind kind, int64_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  endpoints_[id] = Endpoint{kind, index};
}

bool FaultNetwork::Cut(const FaultEvent& p, const Endpoint& a, const Endpoint& b) const {
  auto in_peer = [&](const Endpoint& x) {
    if (p.peer.kind == EndpointKind::kAny) return !p.target.Contains(x.kind, x.index);
    return p.peer.Contains(x.kind, x.index);
  };
  return (p.target.Contains(a.kind, a.index) && in_peer(b)) ||
         (p.target.Contains(b.kind, b.index) && in_peer(a));
}

NetworkRoute FaultNetwork::Decide(caf::actor_id from, caf::actor_id to,
                                  caf::actor_clock::time_point now) {
  NetworkRoute route;
  if (from == to || events_.empty()) return route;
  std::lock_guard<std::mutex> lock(mu_);
  auto a = endpoints_.find(from);
  auto b = endpoints_.find(to);
  if (a == endpoints_.end() || b == endpoints_.end()) return route;
  const double now_s = clock_.Seconds(now);
  for (const FaultEvent& e : events_) {
    if (now_s < e.at_s || now_s >= e.EndS()) continue;
    if (e.kind == FaultKind::kPartition) {
      if (Cut(e, a->second, b->second)) {
        ++counters_.partitioned;
        route.copies = 0;
        return route;
      }
      continue;
    }
    if (!e.link.Matches(a->second.kind, b->second.kind)) continue;
    // One draw per matching fault and message, whatever its outcome: the sequence of draws
    // depends only on the messages sent.
    const double u = rng_.Uniform01();
    if (e.kind == FaultKind::kDrop && u < e.probability) {
      ++counters_.dropped;
      route.copies = 0;
      return route;
    }
    if (e.kind == FaultKind::kDuplicate && u < e.probability) {
      ++counters_.duplicated;
      route.copies = 2;
    }
    if (e.kind == FaultKind::kDelay) {
      ++counters_.delayed;
      route.delay_s += -std::log(1.0 - u) * e.delay_s;
    }
  }
  return route;
}

NetworkCounters FaultNetwork::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

}  // namespace troupe
