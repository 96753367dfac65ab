// Records a run produces: one per job (jobs.csv), one per scheduling round (rounds.csv) and,
// when asked for, one per lease part (leases.csv).
// Plain data; the metrics recorder receives them as messages and the report writer prints them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace troupe {

// faults.recovery (docs/faults.md, "Recovery"): what checkpoints and restarts cost a job, in
// seconds of its wall time (times its GPUs: GPU-seconds). In a report, what happened since the
// job's last report; in a record, the job's totals.
struct JobRecovery {
  int32_t checkpoints = 0;  // checkpoints written (every_lease: one a lease, free)
  double checkpoint_s = 0;  // writing checkpoints, training paused
  double restart_s = 0;     // restarting after failures: restart_s and reading the checkpoint back
  double lost_s = 0;        // training lost to failures: everything since the last checkpoint
  double cut_short_s = 0;   // leases cut short by failures, up to the failure (not in gpu_seconds)
  int32_t interruptions = 0;  // failures that hit the job while it ran
  // continue_smaller: of each cost's seconds times the job's GPUs, the GPU-seconds of the GPUs a
  // smaller lease did not hold (0 for a job that never ran smaller). The GPU-seconds a cost took
  // are its seconds x gpus - these.
  double unheld_checkpoint_gpu_s = 0;
  double unheld_restart_gpu_s = 0;
  double unheld_lost_gpu_s = 0;
  double unheld_cut_short_gpu_s = 0;
  JobRecovery& operator+=(const JobRecovery& o) {
    checkpoints += o.checkpoints;
    interruptions += o.interruptions;
    checkpoint_s += o.checkpoint_s;
    restart_s += o.restart_s;
    lost_s += o.lost_s;
    cut_short_s += o.cut_short_s;
    unheld_checkpoint_gpu_s += o.unheld_checkpoint_gpu_s;
    unheld_restart_gpu_s += o.unheld_restart_gpu_s;
    unheld_lost_gpu_s += o.unheld_lost_gpu_s;
    unheld_cut_short_gpu_s += o.unheld_cut_short_gpu_s;
    return *this;
  }
};
template <class Inspector>
auto inspect(Inspector& f, JobRecovery& x) {
  return f(x.checkpoints, x.checkpoint_s, x.restart_s, x.lost_s, x.cut_short_s, x.interruptions,
           x.unheld_checkpoint_gpu_s, x.unheld_restart_gpu_s, x.unheld_lost_gpu_s,
           x.unheld_cut_short_gpu_s);
}

// Where a job stands between its checkpoints (faults.recovery): kept in its account, and so in
// the checkpoint store, so that a respawned job knows what it lost.
struct CheckpointCadence {
  int64_t saved_iterations_left = -1;  // at the last checkpoint; -1: none taken yet (the start)
  double unsaved_train_s = 0;          // training since the last checkpoint (lost on a failure)
  double writing_left_s = 0;           // of a checkpoint being written (training paused)
  double restart_left_s = 0;           // of a restart still to pay before training resumes
};
template <class Inspector>
auto inspect(Inspector& f, CheckpointCadence& x) {
  return f(x.saved_iterations_left, x.unsaved_train_s, x.writing_left_s, x.restart_left_s);
}

struct JobRecord {
  // What each round the job runs in adds to, side by side and first (a scheduler writes them for
  // thousands of jobs a round): the start of the first round it ran in (-1 if it never ran), the
  // rounds in which it held a lease, its attained service, and the GPU-seconds of its leases lost
  // to faults (dead servers, a crash of the job itself: work not checkpointed; docs/faults.md).
  double start_s = -1;
  int64_t rounds_run = 0;
  double gpu_seconds = 0;
  double wasted_gpu_s = 0;
  int64_t job_id = 0;
  std::string model;
  int32_t gpus = 0;
  int32_t restarts = 0;  // of the job's actor, after faults
  int64_t iterations = 0;
  double arrival_s = 0;
  double end_s = -1;  // end of the round in which it finished; -1 if unfinished
  double jct_s = -1;  // end_s - arrival_s
  // Seconds the job would take at its GPU-proportional share, run without queueing
  // (iterations x iteration time): the lower bound JCT is checked against.
  double ideal_duration_s = 0;
  bool measured = false;         // inside the metrics window
  int32_t profiling_points = 0;  // points the profiler measured (0 with oracle profiling)
  double profiling_s = 0;        // virtual time profiling took
  std::string failure;           // why it failed ("" unless it did: then end_s and jct_s are -1)
};
template <class Inspector>
auto inspect(Inspector& f, JobRecord& x) {
  return f(x.job_id, x.model, x.gpus, x.iterations, x.arrival_s, x.start_s, x.end_s, x.jct_s,
           x.ideal_duration_s, x.rounds_run, x.gpu_seconds, x.measured, x.profiling_points,
           x.profiling_s, x.wasted_gpu_s, x.restarts, x.failure);
}

// With a fabric (docs/network.md): the seconds a job's iterations spent in exposed communication
// over it, and the part of them other jobs' traffic cost it (jobs.csv's comm_s, contention_s).
// Kept apart from JobRecord, which every job of every run carries.
struct JobNetworkRecord {
  int64_t job_id = 0;
  double comm_s = 0;
  double contention_s = 0;
};
template <class Inspector>
auto inspect(Inspector& f, JobNetworkRecord& x) {
  return f(x.job_id, x.comm_s, x.contention_s);
}

// With faults.recovery, at the run's end: each job's recovery costs (jobs.csv's recovery
// columns), kept apart from JobRecord as the fabric's are.
struct JobRecoveryRecord {
  int64_t job_id = 0;
  JobRecovery costs;
};
template <class Inspector>
auto inspect(Inspector& f, JobRecoveryRecord& x) {
  return f(x.job_id, x.costs);
}
struct JobRecoveryBatch {
  std::vector<JobRecoveryRecord> jobs;
};
template <class Inspector>
auto inspect(Inspector& f, JobRecoveryBatch& x) {
  return f(x.jobs);
}

// The fabric's records of a run's end: every job that crossed it, by job id.
struct JobNetworkBatch {
  std::vector<JobNetworkRecord> jobs;
};
template <class Inspector>
auto inspect(Inspector& f, JobNetworkBatch& x) {
  return f(x.jobs);
}

// A fault the injector applied, and when the run recovered from it (-1: it did not, or the fault
// needs no recovery).
struct FaultRecord {
  double at_s = 0;
  std::string fault;   // FaultEvent::Describe()
  std::string effect;  // what it hit: "killed server 3", "job 17 not running", ...
  double recovered_s = -1;
};
template <class Inspector>
auto inspect(Inspector& f, FaultRecord& x) {
  return f(x.at_s, x.fault, x.effect, x.recovered_s);
}

// A server that went down (a crash: declared, random, drawn from a failure model or replayed from
// a failure trace; or a node lost without notice) and what it interrupted: interruptions.csv and
// summary.json's `failures` (docs/failures.md, "What failures cost").
struct ServerDownRecord {
  double at_s = 0;
  int32_t server = 0;
  int32_t gpus = 0;          // the server's
  std::string cause;         // "failure:gpu", ...; "fault": declared or random; "lost": no notice
  double restart_at_s = -1;  // when it came back, or was to (-1: never)
  int32_t jobs_hit = 0;      // jobs whose leases on it were running
  int32_t job_gpus_hit = 0;  // all the GPUs of those jobs (a gang job stops whole)
};
template <class Inspector>
auto inspect(Inspector& f, ServerDownRecord& x) {
  return f(x.at_s, x.server, x.gpus, x.cause, x.restart_at_s, x.jobs_hit, x.job_gpus_hit);
}

// A server recorded down came back at at_s: its ServerDownRecord's restart_at_s becomes at_s (a
// second crash while it was down may have put its return off).
struct ServerBackRecord {
  int32_t server = 0;
  double at_s = 0;
};
template <class Inspector>
auto inspect(Inspector& f, ServerBackRecord& x) {
  return f(x.server, x.at_s);
}

struct RoundRecord {
  int64_t round = 0;
  double start_s = 0;
  double end_s = 0;
  int32_t gpus_allocated = 0;
  double cpus_allocated = 0;
  double memory_gb_allocated = 0;
  int32_t jobs_running = 0;
  int32_t jobs_queued = 0;
  int32_t jobs_finished = 0;  // finished in this round
};
template <class Inspector>
auto inspect(Inspector& f, RoundRecord& x) {
  return f(x.round, x.start_s, x.end_s, x.gpus_allocated, x.cpus_allocated, x.memory_gb_allocated,
           x.jobs_running, x.jobs_queued, x.jobs_finished);
}

// One part of one job's lease in one round, as the job received it from the server.
struct LeaseRecord {
  int64_t round = 0;
  int64_t job_id = 0;
  int32_t server = 0;
  std::vector<int32_t> gpu_ids;
  double cpus = 0;
  double memory_gb = 0;
};
template <class Inspector>
auto inspect(Inspector& f, LeaseRecord& x) {
  return f(x.round, x.job_id, x.server, x.gpu_ids, x.cpus, x.memory_gb);
}

// One link of the fabric in one round (links.csv): what crossed it.
struct LinkRecord {
  int64_t round = 0;
  int32_t link = 0;  // the topology's link index (fabric/topology.hpp names it)
  double start_s = 0;
  double end_s = 0;
  double bytes = 0;
  int32_t flows = 0;            // flows crossing it this round
  double rate_bytes_per_s = 0;  // their max-min rates summed
};
template <class Inspector>
auto inspect(Inspector& f, LinkRecord& x) {
  return f(x.round, x.link, x.start_s, x.end_s, x.bytes, x.flows, x.rate_bytes_per_s);
}

struct LinkBatch {
  std::vector<LinkRecord> links;
};
template <class Inspector>
auto inspect(Inspector& f, LinkBatch& x) {
  return f(x.links);
}

// The lease parts of one round, sent to the metrics recorder in one message.
struct LeaseBatch {
  std::vector<LeaseRecord> leases;
};
template <class Inspector>
auto inspect(Inspector& f, LeaseBatch& x) {
  return f(x.leases);
}

}  // namespace troupe
