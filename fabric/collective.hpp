// The traffic of a data-parallel job's gradient all-reduce over the fabric: which server-to-server
// flows it opens and how many bytes each carries per iteration, and how long the collective takes
// at given rates.
//
// A ring all-reduce of S bytes over N ranks sends 2(N-1)/N * S bytes over every edge of the ring
// (reduce-scatter, then all-gather) in 2(N-1) steps (Patarasuk and Yuan, "Bandwidth optimal
// all-reduce algorithms for clusters of workstations", JPDC 2009). A ring over a job's GPUs laid
// out server by server crosses the network once per server boundary: k flows for k servers,
// server i to server i+1 (mod k), each at 2(N-1)/N * S bytes. Hierarchical (inside each server
// first, then a ring over the k servers — NCCL's tree/ring hybrids, Horovod's hierarchical
// all-reduce): the same k flows at 2(k-1)/k * S bytes. Traffic inside a server is in the
// model's measured iteration time; only what leaves a server is added. A job inside one server
// opens no flow.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "fabric/topology.hpp"

namespace troupe::fabric {

enum class Collective : int8_t { kHierarchicalRing, kRing };

struct JobPart {
  int32_t server = 0;
  int32_t gpus = 0;
};

struct CollectiveTraffic {
  // (from server, to server) of each flow, in ring order; empty for a job inside one server.
  std::vector<std::pair<int32_t, int32_t>> flows;
  double bytes_per_flow = 0;  // per iteration
  int32_t steps = 0;          // the ring's steps, each paying the slowest hop's latency
};

// The flows of an all-reduce of gradient_bytes over `parts` (servers in the order given, each
// listed once).
CollectiveTraffic AllReduceTraffic(std::span<const JobPart> parts, double gradient_bytes,
                                   Collective collective);

// Seconds an all-reduce takes when its slowest flow runs at `slowest_rate` bytes per second and
// the slowest hop's one-way latency is `latency_s`: bytes_per_flow / slowest_rate + steps *
// latency_s (0 without flows).
double AllReduceSeconds(const CollectiveTraffic& traffic, double slowest_rate, double latency_s);

// The closed form: a ring all-reduce of s bytes over n ranks at bandwidth b with per-step
// latency a: 2(n-1)/n * s/b + 2(n-1) * a.
double RingAllReduceSeconds(double bytes, int32_t ranks, double bytes_per_s, double latency_s);

}  // namespace troupe::fabric
