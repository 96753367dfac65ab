// The plain (actor-free) messages of the lease protocol that the round engine reads and writes
// (scheduling/cluster_scheduler.hpp): the terms of a job's lease on one server, a job's report at
// the end of a lease and the parts of a standing lease. Part of the protocol of
// messages/cluster_messages.hpp, which includes this.
#pragma once

#include <cstdint>
#include <vector>

#include "messages/records.hpp"

namespace troupe {

// The terms of one job's lease on one server for a round: what the engine grants (its Grant) and
// what the scheduler orders the server to book (LeaseOrder, which adds the job's actor). Fields
// are ordered so that the struct packs into 56 bytes (LeaseOrder: one 64-byte cache line).
struct LeaseTerms {
  int64_t job_id = 0;
  int32_t gpus = 0;
  int32_t parts = 1;  // servers the job spans this round (gang: all or nothing)
  double cpus = 0;
  double memory_gb = 0;
  // The job's speed on this server's GPU type, relative to the reference type (1 on a cluster
  // that names no type): the server's grant carries it, so the job runs at it.
  double type_speed = 1;
  // With a fabric: the exposed seconds of the job's gradient exchange per iteration at its share
  // of the links this round (docs/network.md); an iteration takes its compute plus this.
  double network_s = 0;
  int32_t rounds_stood = 0;  // rounds the job's previous lease stood since its last grant
};
template <class Inspector>
auto inspect(Inspector& f, LeaseTerms& x) {
  return f(x.job_id, x.gpus, x.parts, x.cpus, x.memory_gb, x.type_speed, x.network_s,
           x.rounds_stood);
}

// A part of a standing lease on one server: the server keeps the job's lease there, with its
// GPUs, if it is of this size, and otherwise books one; either way it tells the job nothing.
struct StandingPart {
  int64_t job_id = 0;
  int32_t gpus = 0;
  double cpus = 0;
  double memory_gb = 0;
};
template <class Inspector>
auto inspect(Inspector& f, StandingPart& x) {
  return f(x.job_id, x.gpus, x.cpus, x.memory_gb);
}

// One part of a lease as the job holds it: the server, its GPU indices there, CPUs, memory.
struct LeasePart {
  int32_t server = 0;
  std::vector<int32_t> gpu_ids;
  double cpus = 0;
  double memory_gb = 0;
};
template <class Inspector>
auto inspect(Inspector& f, LeasePart& x) {
  return f(x.server, x.gpu_ids, x.cpus, x.memory_gb);
}

// faults.recovery: what a job's offer to keep its lease adds, so that the scheduler credits each
// round the lease stands as the job would (scheduling/lease_credit.hpp, CreditStoodRound): the
// seconds of one iteration at the lease's share, its checkpoint costs, and its cadence after the
// lease.
struct StandingCadence {
  double iteration_s = 0;  // 0: none (a job without faults.recovery)
  double interval_s = 0;
  double write_s = 0;
  CheckpointCadence cadence;
};
template <class Inspector>
auto inspect(Inspector& f, StandingCadence& x) {
  return f(x.iteration_s, x.interval_s, x.write_s, x.cadence);
}

// A job's report at the end of a lease.
struct JobProgress {
  int64_t job_id = 0;
  int64_t round = 0;
  bool ran = false;  // false when a part of its gang lease was refused
  int64_t iterations_done = 0;
  int64_t iterations_left = 0;
  bool finished = false;
  int32_t gpus = 0;
  double cpus = 0;
  double memory_gb = 0;
  double speedup = 0;            // throughput relative to the proportional share this lease
  std::vector<LeasePart> parts;  // what the servers granted it this round
  double lease_start_s = 0;
  double wasted_gpu_s = 0;  // GPU-seconds of a lease lost to a dead server (work not checkpointed)
  // Sent at the grant for the lease's end (emulated, without faults: the work is committed at
  // the grant): the scheduler files it and takes it when its round's timer fires, as it would
  // take a report timed to arrive then.
  bool for_round_end = false;
  // The job's offer to keep this lease (-1: none): the iterations it makes in each further round
  // of the same length and share, with nothing to do per round (the standing leases above).
  int64_t standing_iterations = -1;
  StandingCadence standing_cadence;  // with an offer, under faults.recovery
  // faults.recovery: the costs since the job's last report, and whether a failure rolled the job
  // back to its last checkpoint (iterations_left is then that checkpoint's, not the books').
  JobRecovery recovery;
  bool rolled_back = false;
};
template <class Inspector>
auto inspect(Inspector& f, JobProgress& x) {
  return f(x.job_id, x.round, x.ran, x.iterations_done, x.iterations_left, x.finished, x.gpus,
           x.cpus, x.memory_gb, x.speedup, x.parts, x.lease_start_s, x.wasted_gpu_s,
           x.for_round_end, x.standing_iterations, x.standing_cadence, x.recovery, x.rolled_back);
}

}  // namespace troupe
