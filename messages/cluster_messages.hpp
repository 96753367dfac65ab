// The lease protocol: the typed messages the scheduler, server, job and workload actors exchange.
//
// One round, as data flows:
//   scheduler --ArrivalsRequest--> workload --ArrivalBatch--> scheduler     (jobs that arrived)
//   scheduler --RoundLeases--> server   (every lease of the round on that server, one message)
//   server --LeaseGrant--> job          (one per part; a gang job waits for all its parts)
//   server --LeaseRefusal--> scheduler  (a lease that would overcommit the server)
//   job --JobProgress--> scheduler      (at the end of the lease, virtual or wall time; emulated
//                                        without faults, at the grant, filed until the round ends)
// Standing leases (emulated, without faults): a job whose report offers a rate
// (JobProgress.standing_iterations) and whom the next round gives the same share — parts of the
// same sizes on GPUs of the same types, on whichever servers — keeps its lease: the servers keep
// or book its parts (RoundLeases.standing), no grant and no report cross, and the scheduler
// credits the offered rate. The job learns how many rounds its lease stood with its next grant
// (LeaseGrant.rounds_stood).
// When faults lose messages or actors (docs/faults.md):
//   scheduler --ProgressQuery--> job    (a report is missing report_grace_s after the round)
//   scheduler --LeaseLost--> job        (a server of its lease died: the lease's work is lost)
//   job --JobCheckpoint--> checkpoint store (with faults: the state a restarted job resumes from)
// Every type here is serialisable (a free `inspect`) and registered with CAF under the same name
// on every node (message_types.hpp), so any of these actors may live in another process.
#pragma once

#include <caf/actor.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/actor_interfaces.hpp"
#include "messages/gang_weights.hpp"
#include "messages/job_progress.hpp"
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
  // The devices of its host process that its GPUs are, by GPU index: set by a `troupe node`
  // from its own device list (--devices); empty: GPU i is device i.
  std::vector<int32_t> devices;
};
template <class Inspector>
auto inspect(Inspector& f, ServerSpec& x) {
  return f(x.index, x.name, x.gpus, x.cpus, x.memory_gb, x.devices);
}

// The scheduler's order for one job's part on one server: the lease's terms and the job to grant.
struct LeaseOrder {
  job_actor job;
  LeaseTerms terms;
};
template <class Inspector>
auto inspect(Inspector& f, LeaseOrder& x) {
  return f(x.job, x.terms);
}
// Every round's leases are vectors of these: one cache line each (LeaseTerms is ordered to pack).
static_assert(sizeof(LeaseOrder) <= 64);

// Every lease of one round on one server. Leases of earlier rounds have ended by start_s, but for
// the standing parts kept here.
struct RoundLeases {
  int64_t round = 0;
  double start_s = 0;
  double end_s = 0;
  std::vector<LeaseOrder> leases;
  std::vector<StandingPart> standing;
};
template <class Inspector>
auto inspect(Inspector& f, RoundLeases& x) {
  return f(x.round, x.start_s, x.end_s, x.leases, x.standing);
}

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
  // Who ordered the lease: the job reports there (it may have restarted).
  scheduler_actor scheduler;
  double speed = 1;  // the server's throughput factor (a `slow` fault: a straggler)
  // Rounds the job's previous lease stood (at the rate its last report offered) since its last
  // grant: the job credits them before this lease.
  int32_t rounds_stood = 0;
  double network_s = 0;  // LeaseTerms.network_s
};
template <class Inspector>
auto inspect(Inspector& f, LeaseGrant& x) {
  return f(x.round, x.start_s, x.end_s, x.server, x.gpu_ids, x.cpus, x.memory_gb, x.parts,
           x.granted, x.scheduler, x.speed, x.rounds_stood, x.network_s);
}

// The scheduler asks a job for its report on the lease that started at lease_start_s: the job
// answers with that JobProgress again (a lost report), or ran=false if it never held it.
struct ProgressQuery {
  int64_t round = 0;
  double lease_start_s = 0;
};
template <class Inspector>
auto inspect(Inspector& f, ProgressQuery& x) {
  return f(x.round, x.lease_start_s);
}

// A server of the job's lease that started at lease_start_s died: the lease ends now and its work
// since the last checkpoint (the lease start) is lost. The job reports ran=false at once.
struct LeaseLost {
  int64_t round = 0;
  double lease_start_s = 0;
  int32_t server = 0;
  // With standing leases: the rounds the job's previous lease stood since its last grant, which
  // the lease's grants tell it (LeaseGrant.rounds_stood) — credited first by a job that no grant
  // of this lease reached — and whether that lease stood into this one (cut from its start).
  int32_t rounds_stood = 0;
  bool stood = false;
  // When the lease was cut (the failure's instant, as the scheduler heard it): a loss that comes
  // late (a `delay` fault) costs what it cut, not what ran until it came. -1: when it comes.
  double at_s = -1;
};
template <class Inspector>
auto inspect(Inspector& f, LeaseLost& x) {
  return f(x.round, x.lease_start_s, x.server, x.rounds_stood, x.stood, x.at_s);
}

// A job's checkpoint on shared storage, written at the end of each lease it ran or lost (Synergy
// checkpoints on lease termination): what a restarted job resumes from, with the job's own
// account of its service so that a restarted scheduler can rebuild its records.
struct JobCheckpoint {
  int64_t job_id = 0;
  int64_t iterations_left = 0;
  double at_s = 0;  // end of the lease it checkpointed at
  bool finished = false;
  double first_start_s = -1;
  int64_t rounds_run = 0;
  double gpu_seconds = 0;
  double wasted_gpu_s = 0;
  int32_t restarts = 0;
  GangState gang;  // real compute: a gang's trained weights (messages/gang_weights.hpp)
  // faults.recovery: where the job stands between checkpoints, and its costs so far.
  CheckpointCadence cadence;
  JobRecovery recovery;
};
template <class Inspector>
auto inspect(Inspector& f, JobCheckpoint& x) {
  return f(x.job_id, x.iterations_left, x.at_s, x.finished, x.first_start_s, x.rounds_run,
           x.gpu_seconds, x.wasted_gpu_s, x.restarts, x.gang, x.cadence, x.recovery);
}

// A server tells the scheduler it refused a lease, and why.
struct LeaseRefusal {
  int64_t round = 0;
  int32_t server = 0;
  int64_t job_id = 0;
  std::string reason;
};
template <class Inspector>
auto inspect(Inspector& f, LeaseRefusal& x) {
  return f(x.round, x.server, x.job_id, x.reason);
}

// Changes the CPUs and memory of a lease a job holds on a server; answered with the
// server's free resources or an error.
struct LeaseResize {
  int64_t job_id = 0;
  double cpus = 0;
  double memory_gb = 0;
};
template <class Inspector>
auto inspect(Inspector& f, LeaseResize& x) {
  return f(x.job_id, x.cpus, x.memory_gb);
}

// Ends a job's lease on a server before its end time.
struct LeaseRelease {
  int64_t job_id = 0;
};
template <class Inspector>
auto inspect(Inspector& f, LeaseRelease& x) {
  return f(x.job_id);
}

// What a server has free, in answer to a resize or release.
struct ServerFree {
  int32_t server = 0;
  int32_t gpus = 0;
  double cpus = 0;
  double memory_gb = 0;
};
template <class Inspector>
auto inspect(Inspector& f, ServerFree& x) {
  return f(x.server, x.gpus, x.cpus, x.memory_gb);
}

// The scheduler asks the workload for every job arriving up to until_s.
struct ArrivalsRequest {
  double until_s = 0;
};
template <class Inspector>
auto inspect(Inspector& f, ArrivalsRequest& x) {
  return f(x.until_s);
}

// A job that arrived, its actor, and the model facts the scheduler plans with: its demand and
// sensitivity as profiling estimated them.
struct ArrivedJob {
  JobSpec spec;
  job_actor job;  // none until the job's actor is spawned (without faults: when first placed)
  double iter_time_s = 0;
  double ideal_cpus_per_gpu = 0;
  double ideal_memory_gb_per_gpu = 0;
  double speedup_at_ideal = 1;
  SensitivityMatrix sensitivity;
  // The model's gradient (bytes) and the share of its exchange hidden behind compute: with a
  // fabric, what its all-reduce puts on the links.
  double gradient_bytes = 0;
  double comm_overlap = 0;
};
template <class Inspector>
auto inspect(Inspector& f, ArrivedJob& x) {
  return f(x.spec, x.job, x.iter_time_s, x.ideal_cpus_per_gpu, x.ideal_memory_gb_per_gpu,
           x.speedup_at_ideal, x.sensitivity, x.gradient_bytes, x.comm_overlap);
}

struct ArrivalBatch {
  std::vector<ArrivedJob> jobs;
  double next_arrival_s = -1;  // -1: the workload is exhausted
};
template <class Inspector>
auto inspect(Inspector& f, ArrivalBatch& x) {
  return f(x.jobs, x.next_arrival_s);
}

}  // namespace troupe
