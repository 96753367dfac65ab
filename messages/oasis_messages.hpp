// The OASiS run's protocol (actors/oasis/, docs/oasis.md). Slots of slot_s virtual seconds:
//
//   scheduler --OasisTick(t) at t * slot_s--> scheduler     arrivals of t, then the slot's plan
//   scheduler --OasisLease(t, workers, PS, machines)--> job   one per job holding workers in t
//   job --OasisWork(range of mini-batches, PS, their NICs)--> worker   the job's remaining
//                                                            mini-batches split evenly over its
//                                                            leased workers
//   worker --OasisGradient (one per data chunk of its range, aggregated)--> NIC of the PS machine
//   NIC --OasisGradient, when its last bit is in--> PS
//   PS --OasisParams--> NIC --OasisParams, when its last bit is out--> worker
//   with a fabric, the NIC is the link domains on the transfer's route (oasis_fabric.hpp):
//   worker --OasisGradient--> domain --...--> domain --OasisGradient, when in--> PS, and back
//   worker --OasisWorkerDone--> job                          its range is trained, or its lease
//                                                            ended before it was
//   job --OasisSlotReport(t, trained, finished)--> scheduler  once every leased worker is done
//
// A worker trains a chunk piece of m mini-batches in m tau_i seconds, then sends its gradients
// (m e_i Gb at its link's b_i Gbps) through the NIC of its PS's machine; the parameters come back
// the same way. With a NIC that has room (nic.hpp) and no link delay that is m (tau_i + 2 e_i /
// b_i) seconds a piece, the model's step time. The scheduler starts slot t + 1 only once every
// report of slot t is in. Every type is plain data with a free `inspect`, registered under its
// name (message_types.cpp).
#pragma once

#include <caf/actor.hpp>
#include <cstdint>
#include <vector>

namespace troupe {

struct OasisTick {
  int32_t slot = 0;
};
template <class Inspector>
auto inspect(Inspector& f, OasisTick& x) {
  return f(x.slot);
}

// Slot `slot` of job `job` (its index in the run): `workers` workers and `ps` parameter servers,
// the machine of each (worker_machines[w], ps_machines[k]), for [start_s, end_s). The workers
// begin at begin_s: start_s, or later when the last parameters of the slot before came back late.
struct OasisLease {
  int64_t job = 0;
  int32_t slot = 0;
  double start_s = 0;
  double end_s = 0;
  std::vector<int32_t> worker_machines;
  std::vector<int32_t> ps_machines;
  double begin_s = 0;
};
template <class Inspector>
auto inspect(Inspector& f, OasisLease& x) {
  return f(x.job, x.slot, x.start_s, x.end_s, x.worker_machines, x.ps_machines, x.begin_s);
}

// A transfer's way across the fabric, when the run has one (actors/oasis/oasis_fabric.hpp):
// from fabric server `from` to `to` (-1: no fabric; the PS machine's NIC carries it). The link
// domains on its route book it in turn, each at the earliest start >= at_s that fits on its own
// links; `hop` is the domain holding it, pass_start_s where the pass began (when a pass ends where
// it began, every link has it booked at that start). `id` names its bookings. A transfer that
// has not agreed within a few passes takes its domains' locks (in domain order) and books alone.
struct OasisRoute {
  int32_t from = -1;
  int32_t to = -1;
  int64_t id = 0;
  int32_t hop = 0;
  double at_s = 0;
  double pass_start_s = 0;
  int32_t passes = 0;    // booking passes begun
  int32_t locks = -1;    // -1: unlocked; else how many of its domains' locks it holds
  bool release = false;  // a lock holder's notice to one of its domains: booked, unlock
};
template <class Inspector>
auto inspect(Inspector& f, OasisRoute& x) {
  return f(x.from, x.to, x.id, x.hop, x.at_s, x.pass_start_s, x.passes, x.locks, x.release);
}

// Train mini-batches [from, to) of the job's sequence (epoch-major: position p is in chunk
// floor(p / M) mod N of epoch floor(p / (N M))) by end_s, exchanging with the slot's ps_count
// PS, grouped by machine: ps[k] stands for the shares[k] PS on the machine whose NIC is nics[k].
// With a fabric, nics[k] is the link domain of the worker's own server instead, and the worker's
// fabric server and each PS machine's are given (server, ps_servers[k]).
struct OasisWork {
  int32_t slot = 0;
  double start_s = 0;  // when the worker begins (virtual seconds, carried, not read off a clock)
  double end_s = 0;
  double from = 0;
  double to = 0;
  std::vector<caf::actor> ps;
  std::vector<caf::actor> nics;
  std::vector<int32_t> shares;
  int32_t ps_count = 0;
  int32_t server = -1;
  std::vector<int32_t> ps_servers;
};
template <class Inspector>
auto inspect(Inspector& f, OasisWork& x) {
  return f(x.slot, x.start_s, x.end_s, x.from, x.to, x.ps, x.nics, x.shares, x.ps_count, x.server,
           x.ps_servers);
}

// One chunk piece's gradients, gb Gb at gbps (the worker's link). The worker sends them at
// ready_s to the NIC of `ps`'s machine; the model has them at the PS at nominal_s and the
// parameters back at return_s. The NIC sets at_s (when the last bit is in) and hands them on.
struct OasisGradient {
  int64_t chunk = 0;  // index in the job's sequence of chunk trainings
  double minibatches = 0;
  double gb = 0;
  double gbps = 0;
  double ready_s = 0;
  double nominal_s = 0;
  double return_s = 0;
  double at_s = 0;
  caf::actor ps;
  caf::actor nic;
  caf::actor reply_to;
  OasisRoute route;
};
template <class Inspector>
auto inspect(Inspector& f, OasisGradient& x) {
  return f(x.chunk, x.minibatches, x.gb, x.gbps, x.ready_s, x.nominal_s, x.return_s, x.at_s, x.ps,
           x.nic, x.reply_to, x.route);
}

// The parameters for one piece, the same way back: the PS hands them to the NIC at ready_s, the
// model has them at the worker at nominal_s, the NIC delivers them at at_s.
struct OasisParams {
  int64_t chunk = 0;
  double minibatches = 0;
  double gb = 0;
  double gbps = 0;
  double ready_s = 0;
  double nominal_s = 0;
  double at_s = 0;
  caf::actor reply_to;
  OasisRoute route;
};
template <class Inspector>
auto inspect(Inspector& f, OasisParams& x) {
  return f(x.chunk, x.minibatches, x.gb, x.gbps, x.ready_s, x.nominal_s, x.at_s, x.reply_to,
           x.route);
}

struct OasisWorkerDone {
  int32_t slot = 0;
  int32_t worker = 0;
  double minibatches = 0;  // trained: the pieces whose parameters came back by the lease's end
  double untrained = 0;    // the rest of its range (0 unless the lease ended first)
  int64_t pieces = 0;      // chunk pieces exchanged
  double end_s = 0;        // when its last parameters arrived
};
template <class Inspector>
auto inspect(Inspector& f, OasisWorkerDone& x) {
  return f(x.slot, x.worker, x.minibatches, x.untrained, x.pieces, x.end_s);
}

struct OasisSlotReport {
  int64_t job = 0;
  int32_t slot = 0;
  double minibatches = 0;  // trained in the slot
  double trained = 0;      // trained so far
  bool finished = false;
  double finish_s = 0;  // when the last parameters arrived, if finished
  int64_t pieces = 0;
};
template <class Inspector>
auto inspect(Inspector& f, OasisSlotReport& x) {
  return f(x.job, x.slot, x.minibatches, x.trained, x.finished, x.finish_s, x.pieces);
}

}  // namespace troupe
