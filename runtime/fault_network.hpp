// FaultNetwork: the run's lossy network (docs/faults.md). The actors of the lease protocol
// (servers, jobs, the scheduler, the workload) register their endpoint — kind and index — and
// every Tell/TellAt between two registered actors asks Decide, which applies the partitions and
// the drop/delay/duplicate faults of the plan active at that virtual time. Messages to or from
// unregistered actors (the metrics recorder, the checkpoint store, the injector, timers an actor
// sets itself) are never touched: records and shared storage are reliable.
//
// Contract: decisions depend only on the plan, the seed and the order of calls; in emulated mode
// one thread makes them in a fixed order, so a run's losses are the same on every replay. In real
// mode a mutex orders them (and the wall clock decides which window is active).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <caf/actor_clock.hpp>
#include <caf/fwd.hpp>
#include <cstdint>
#include <mutex>
#include <vector>

#include "base/rng.hpp"
#include "faults/fault_plan.hpp"
#include "runtime/run_clock.hpp"

namespace troupe {

struct NetworkRoute {
  int copies = 1;      // 0: dropped; 2: duplicated
  double delay_s = 0;  // extra virtual seconds before delivery
};

struct NetworkCounters {
  uint64_t dropped = 0;
  uint64_t partitioned = 0;  // dropped by a partition
  uint64_t duplicated = 0;
  uint64_t delayed = 0;
};

class FaultNetwork {
 public:
  // Keeps the plan's partitions and link faults; the other events are the injector's.
  FaultNetwork(const FaultPlan& plan, uint64_t seed, RunClock clock);

  void Register(caf::actor_id id, EndpointKind kind, int64_t index);

  NetworkRoute Decide(caf::actor_id from, caf::actor_id to, caf::actor_clock::time_point now);

  NetworkCounters counters() const;
  const RunClock& clock() const { return clock_; }

 private:
  struct Endpoint {
    EndpointKind kind = EndpointKind::kAny;
    int64_t index = 0;
  };
  bool Cut(const FaultEvent& partition, const Endpoint& a, const Endpoint& b) const;

  std::vector<FaultEvent> events_;
  RunClock clock_;
  mutable std::mutex mu_;
  absl::flat_hash_map<caf::actor_id, Endpoint> endpoints_;
  Rng rng_;
  NetworkCounters counters_;
};

}  // namespace troupe
