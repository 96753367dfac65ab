// Run setup: turns a checked RunConfig into everything a run needs before any actor exists — the
// model catalogue, the job source, the servers and where they live, the scheduler's and the
// runtime's options. Input that only shows up here (a trace line, a job needing more GPUs than
// the cluster has, a mechanism this build lacks) is reported as InvalidInput naming the file and
// line or the field.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/compute_worker_actor.hpp"
#include "actors/profiler_actor.hpp"
#include "actors/scheduler_actor.hpp"
#include "base/status.hpp"
#include "config/config.pb.h"
#include "faults/checkpoint_cadence.hpp"
#include "faults/fault_plan.hpp"
#include "runner/cluster/run_summary.hpp"
#include "runtime/actor_runtime.hpp"
#include "workload/job_source.hpp"
#include "workload/model_catalog.hpp"

namespace troupe {

struct RunPlan {
  std::shared_ptr<const ModelCatalog> catalog;
  std::shared_ptr<JobSource> source;
  std::vector<ServerSpec> servers;
  std::vector<std::string> server_nodes;  // per server: "" in this process, else "host:port"
  SchedulerOptions scheduler;
  bool profile_jobs = false;  // spawn a profiler (profiling other than oracle)
  ProfilerConfig profiler;
  RuntimeOptions runtime;
  ClusterCapacity capacity;
  // config name, mode, policy, mechanism, seed: the summary's fields the plan knows
  summaries::ClusterRunSummary identity;
  std::string out_dir;  // "" writes nothing
  FaultPlan faults;     // empty: a run without faults (no injector, store or network)
  // faults.recovery (docs/faults.md, "Recovery"); null: a checkpoint at every lease's end, free.
  std::shared_ptr<const RecoveryPlan> recovery;
  // workload.replay_job_failures: jobs crash and fail as the trace says (JobSpec.trace_end,
  // crashed_attempts_s), so every job is supervised and reports every lease, as under faults.
  bool replay_job_failures = false;
  int64_t jobs_known = 0;  // jobs the source will release (0: unknown)
  // A trace's job ids, ascending (empty: a generator's, 0 .. jobs_known - 1); with faults only.
  std::vector<int64_t> job_ids;
  int32_t largest_job_gpus = 0;  // the most GPUs a job of the source asks for
  // Jobs in the measurement window (run.measure_*_job; the run ends when they have all ended),
  // for the progress line. 0: no window, every job is measured.
  int64_t jobs_measured = 0;
  // RunConfig.backends: what a real-mode job's lease runs (compute "emulated": nothing, the
  // catalogue's throughput). PlanRun checks that this build and machine can run it.
  gpu::RealComputeOptions compute;
  std::shared_ptr<MeasuredLeaseLog> measured_leases;  // set by a caller that wants the record
  // faults.stragglers.what_if: the same run without its stragglers, run first
  // (runner/cluster/straggler_what_if.hpp); null otherwise.
  std::shared_ptr<RunPlan> without_stragglers;
};

// `config_name` names the config in messages. Precondition: ValidateConfig(cfg) is OK.
Status PlanRun(const config::RunConfig& cfg, const std::string& config_name, RunPlan* plan);

}  // namespace troupe
