// The lease protocol: the typed messages the scheduler, server, job and workload actors exchange.
//
// One round, as data flows:
//   scheduler --ArrivalsRequest--> workload --ArrivalBatch--> scheduler     (jobs that arrived)
//   scheduler --RoundLeases--> server   (every lease of the round on that server, one message)
//   server --LeaseGrant--> job          (one per part; a gang job waits for all its parts)
//   server --LeaseRefusal--> scheduler  (a lease that would overcommit the server)
//   job --JobProgress--> scheduler      (at the end of the lease, virtual or wall time)
// Every type here is serialisable (a free `inspect`) and registered with CAF under the same name
// on every node (message_types.hpp), so any of these actors may live in another process.
#pragma once

#include <caf/actor.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/job_spec.hpp"
#include "messages/sensitivity.hpp"

namespace troupe {

// One server of the cluster, as the scheduler knows it and as a node spawns it.
struct ServerSpec {
  int32_t index = 0;
  std::string name;
  int32_t gpus = 0;
  double cpus = 0;
  double memory_gb = 0;
};

// The scheduler's order for one job's part on one server.
struct LeaseOrder {
  int64_t job_id = 0;
  caf::actor job;
  int32_t gpus = 0;
  double cpus = 0;
  double memory_gb = 0;
  int32_t parts = 1;  // servers the job spans this round (gang: all or nothing)
};

// Every lease of one round on one server. Leases of earlier rounds have ended by start_s.
struct RoundLeases {
  int64_t round = 0;
  double start_s = 0;
  double end_s = 0;
  std::vector<LeaseOrder> leases;
};

// A server's answer to a job for one part of its lease. `granted` false: the server refused it.
struct LeaseGrant {
  int64_t round = 0;
  double start_s = 0;
  double end_s = 0;
  int32_t server = 0;
  std::vector<int32_t> gpu_ids;
  double cpus = 0;
  double memory_gb = 0;
  int32_t parts = 1;
  bool granted = true;
};

// A server tells the scheduler it refused a lease, and why.
struct LeaseRefusal {
  int64_t round = 0;
  int32_t server = 0;
  int64_t job_id = 0;
  std::string reason;
};

// Changes the CPUs and memory of a lease a job holds on a server; answered with the
// server's free resources or an error.
struct LeaseResize {
  int64_t job_id = 0;
  double cpus = 0;
  double memory_gb = 0;
};

// Ends a job's lease on a server before its end time.
struct LeaseRelease {
  int64_t job_id = 0;
};

// What a server has free, in answer to a resize or release.
struct ServerFree {
  int32_t server = 0;
  int32_t gpus = 0;
  double cpus = 0;
  double memory_gb = 0;
};

// One part of a lease as the job holds it: the server, its GPU indices there, CPUs, memory.
struct LeasePart {
  int32_t server = 0;
  std::vector<int32_t> gpu_ids;
  double cpus = 0;
  double memory_gb = 0;
};

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
};

// The scheduler asks the workload for every job arriving up to until_s.
struct ArrivalsRequest {
  double until_s = 0;
};

// A job that arrived, its actor, and the model facts the scheduler plans with: its demand and
// sensitivity as profiling estimated them.
struct ArrivedJob {
  JobSpec spec;
  caf::actor job;
  double iter_time_s = 0;
  double ideal_cpus_per_gpu = 0;
  double ideal_memory_gb_per_gpu = 0;
  double speedup_at_ideal = 1;
  SensitivityMatrix sensitivity;
};

struct ArrivalBatch {
  std::vector<ArrivedJob> jobs;
  double next_arrival_s = -1;  // -1: the workload is exhausted
};

template <class Inspector>
auto inspect(Inspector& f, ServerSpec& x) {
  return f(x.index, x.name, x.gpus, x.cpus, x.memory_gb);
}
template <class Inspector>
auto inspect(Inspector& f, LeaseOrder& x) {
  return f(x.job_id, x.job, x.gpus, x.cpus, x.memory_gb, x.parts);
}
template <class Inspector>
auto inspect(Inspector& f, RoundLeases& x) {
  return f(x.round, x.start_s, x.end_s, x.leases);
}
template <class Inspector>
auto inspect(Inspector& f, LeaseGrant& x) {
  return f(x.round, x.start_s, x.end_s, x.server, x.gpu_ids, x.cpus, x.memory_gb, x.parts,
           x.granted);
}
template <class Inspector>
auto inspect(Inspector& f, LeaseRefusal& x) {
  return f(x.round, x.server, x.job_id, x.reason);
}
template <class Inspector>
auto inspect(Inspector& f, LeaseResize& x) {
  return f(x.job_id, x.cpus, x.memory_gb);
}
template <class Inspector>
auto inspect(Inspector& f, LeaseRelease& x) {
  return f(x.job_id);
}
template <class Inspector>
auto inspect(Inspector& f, ServerFree& x) {
  return f(x.server, x.gpus, x.cpus, x.memory_gb);
}
template <class Inspector>
auto inspect(Inspector& f, LeasePart& x) {
  return f(x.server, x.gpu_ids, x.cpus, x.memory_gb);
}
template <class Inspector>
auto inspect(Inspector& f, JobProgress& x) {
  return f(x.job_id, x.round, x.ran, x.iterations_done, x.iterations_left, x.finished, x.gpus,
           x.cpus, x.memory_gb, x.speedup, x.parts);
}
template <class Inspector>
auto inspect(Inspector& f, ArrivalsRequest& x) {
  return f(x.until_s);
}
template <class Inspector>
auto inspect(Inspector& f, ArrivedJob& x) {
  return f(x.spec, x.job, x.iter_time_s, x.ideal_cpus_per_gpu, x.ideal_memory_gb_per_gpu,
           x.speedup_at_ideal, x.sensitivity);
}
template <class Inspector>
auto inspect(Inspector& f, ArrivalBatch& x) {
  return f(x.jobs, x.next_arrival_s);
}

}  // namespace troupe
