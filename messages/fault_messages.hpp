// The fault protocol (docs/faults.md): what the fault injector tells the actors it hits, and how
// the cluster rebuilds itself after a crash.
//
//   injector --FaultNotice--> scheduler   (before it kills a job: will it come back?)
//   injector --ServerNotice--> scheduler  (before it kills a server: when, if ever, it returns)
//   injector --ServerUp--> scheduler      (a crashed server restarted: its new handle)
//   injector --SlowDown--> server         (a straggler: throughput x factor until until_s)
//   injector --CrashJob / RespawnJob--> workload (the workload spawned the job; it kills and
//                                          respawns it from its checkpoint; it answers a CrashJob
//                                          with the jobs it killed: JobsCrashed)
//   workload --JobRespawned--> scheduler  (the restarted job's new handle)
//   scheduler --JobFailed--> workload     (recorded failed: a restarted scheduler must know)
//   scheduler --RecoverRequest--> workload, --CheckpointQuery--> store (a restarted scheduler)
#pragma once

#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/cluster_messages.hpp"

namespace troupe {

struct FaultNotice {
  int64_t job_id = 0;
  double restart_at_s = -1;  // -1: it stays dead (the job fails)
  std::string fault;         // FaultEvent::Describe()
};
template <class Inspector>
auto inspect(Inspector& f, FaultNotice& x) {
  return f(x.job_id, x.restart_at_s, x.fault);
}

// A server the injector kills (or has killed) comes back at restart_at_s; -1: never. A server
// that dies without any notice (its `troupe node` process died) is lost for good too.
struct ServerNotice {
  int32_t server = 0;
  double restart_at_s = -1;
  std::string fault;  // FaultEvent::Describe()
  std::string cause;  // a failure model's or trace's "failure:COMPONENT"; empty: a declared fault
};
template <class Inspector>
auto inspect(Inspector& f, ServerNotice& x) {
  return f(x.server, x.restart_at_s, x.fault, x.cause);
}

struct ServerUp {
  int32_t server = 0;
  server_actor handle;
};
template <class Inspector>
auto inspect(Inspector& f, ServerUp& x) {
  return f(x.server, x.handle);
}

struct SlowDown {
  double factor = 1;
  double until_s = 0;  // infinity: to the end of the run
};
template <class Inspector>
auto inspect(Inspector& f, SlowDown& x) {
  return f(x.factor, x.until_s);
}

// The jobs a crash fault hits; the workload answers with JobsCrashed.
struct CrashJob {
  std::vector<int64_t> job_ids;
  bool restarts = false;  // a RespawnJob will follow
};
template <class Inspector>
auto inspect(Inspector& f, CrashJob& x) {
  return f(x.job_ids, x.restarts);
}

// Of a CrashJob's jobs, those whose actor was killed: the others had none (not placed yet — a job
// gets its actor when first placed — or already ended, or down already).
struct JobsCrashed {
  std::vector<int64_t> killed;
};
template <class Inspector>
auto inspect(Inspector& f, JobsCrashed& x) {
  return f(x.killed);
}

struct RespawnJob {
  int64_t job_id = 0;
};
template <class Inspector>
auto inspect(Inspector& f, RespawnJob& x) {
  return f(x.job_id);
}

struct JobRespawned {
  int64_t job_id = 0;
  job_actor handle;
  JobCheckpoint checkpoint;  // what it resumed from
};
template <class Inspector>
auto inspect(Inspector& f, JobRespawned& x) {
  return f(x.job_id, x.handle, x.checkpoint);
}

// The scheduler recorded the job failed; a restarted scheduler learns it from the workload instead
// of failing (and reporting) the job again.
struct JobFailed {
  int64_t job_id = 0;
};
template <class Inspector>
auto inspect(Inspector& f, JobFailed& x) {
  return f(x.job_id);
}

// A restarted scheduler asks the workload for every job it has released so far.
struct RecoverRequest {};

struct RecoveredJobs {
  std::vector<ArrivedJob> jobs;        // each with its live actor, none while a crash has it down
  std::vector<int64_t> dead_for_good;  // crashed without a restart: failed
  std::vector<int64_t> failed;         // recorded failed already (JobFailed), by an earlier one
  double next_arrival_s = -1;
};
template <class Inspector>
auto inspect(Inspector& f, RecoveredJobs& x) {
  return f(x.jobs, x.dead_for_good, x.failed, x.next_arrival_s);
}

// Every checkpoint the store holds (a restarted scheduler), or one job's (job_id >= 0).
struct CheckpointQuery {
  int64_t job_id = -1;
};
template <class Inspector>
auto inspect(Inspector& f, CheckpointQuery& x) {
  return f(x.job_id);
}

struct CheckpointList {
  std::vector<JobCheckpoint> checkpoints;
};
template <class Inspector>
auto inspect(Inspector& f, CheckpointList& x) {
  return f(x.checkpoints);
}

template <class Inspector>
auto inspect(Inspector& f, RecoverRequest&) {
  return f(caf::meta::type_name("troupe.RecoverRequest"));
}

}  // namespace troupe
