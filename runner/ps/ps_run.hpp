// A hierarchical-parameter-server training run (RunConfig.paramserver; docs/paramserver.md).
//
// PlanPsRun turns a checked config into a PsPlan: the options every actor gets and the data —
// the training stream (batches * nodes * batch_size examples, from the seeded Criteo-like
// generator or a Criteo TSV file) and the held-out set. ExecutePsRun opens one SSD-PS per node,
// spawns per node a reader, a partitioner, a shard and a trainer (actors/ps/*_actor.hpp) and a
// collector, drives them on the run's ActorRuntime until the last step, and turns the records
// into a PsRunResult: one PsBatchRecord per global step, the summary, and the final parameters
// (which a test compares with paramserver::ReferenceTrainer). When the plan names an out_dir it
// writes the run directory there (ps_report.hpp), all of it or nothing.
//
// Errors: bad input (a config value the run cannot use, a malformed Criteo line, a working set
// that does not fit in HBM-PS, a fault naming no PS node) is InvalidInput naming the field or
// file:line; SSD-PS failures are IoError. Emulated runs are deterministic: the same plan gives
// the same records, batches.csv and faults.csv byte for byte.
//
// Faults (the config's `faults` block, docs/paramserver.md "Faults"): PlanPsRun turns it into
// plan.faults; crash, slow and disk events on ps:N are played (ps_fault_injector.hpp,
// shard_actor.hpp); the others do not concern a PS run. The result lists what they did
// (PsRunResult::faults, faults.csv) and counts it in the summary; updates_lost must be 0.
//
// Fabric (the config's `fabric` block, docs/paramserver.md "Across the fabric"): PS node n is
// fabric server n, so the fabric must hold exactly paramserver.nodes servers; a fabric that does
// not, or that asks for link_priority gpu_intensity (the fabric actor shares fairly), is
// InvalidInput naming the field. Without a fabric block nothing changes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.hpp"
#include "config/config.pb.h"
#include "fabric/topology.hpp"
#include "faults/fault_plan.hpp"
#include "messages/ps_messages.hpp"
#include "messages/summary.pb.h"
#include "messages/tier_counts.hpp"
#include "paramserver/criteo.hpp"
#include "paramserver/ps_options.hpp"
#include "paramserver/reference_trainer.hpp"
#include "runner/execute_options.hpp"
#include "runtime/actor_runtime.hpp"

namespace troupe {

struct PsPlan {
  PsOptions options;  // the config's paramserver block, as actors/ps/ps_options_of.hpp reads it
  // The block itself: what a `troupe node` hosting a shard or a feed is sent (PsShardSpawn).
  config::ParamServer paramserver;
  std::shared_ptr<const std::vector<paramserver::Example>> train;  // step s, node n: [(sN+n)b, +b)
  std::vector<paramserver::Example> holdout;
  RuntimeOptions runtime;
  std::string config_name;
  std::string mode;         // "emulated" | "real"
  std::string data;         // where the examples came from, in words
  uint64_t seed = 0;        // run.seed
  std::string out_dir;      // "" writes nothing
  bool scratch_ssd = true;  // options.ssd_dir was made for this run: removed at its end
  FaultPlan faults;         // empty: a run without faults (no faults.csv)
  // paramserver.hosts: shard m lives in the `troupe node` at hosts[m] (ps_remote.hpp); empty:
  // every actor in this process.
  std::vector<std::string> hosts;
  // paramserver.trainer_hosts: node n's trainer, reader and partitioner live in the `troupe node`
  // at trainer_hosts[n] (ps_remote.hpp); empty: in this process.
  std::vector<std::string> trainer_hosts;
  // The config's fabric block over the PS nodes (node n is fabric server n): the trainers' pulls,
  // pushes and all-reduce between nodes cross it (trainer_actor.hpp). Null without one.
  std::shared_ptr<const fabric::Topology> fabric;
};

// Precondition: ValidateConfig(cfg) is OK and cfg.has_paramserver().
Status PlanPsRun(const config::RunConfig& cfg, const std::string& config_name, PsPlan* plan);

// One global step. Stage times are the slowest node's modelled busy seconds; counts and bytes
// are summed over nodes and shards.
struct PsBatchRecord {
  int64_t batch = 0;
  double loss = 0;          // the global batch's mean log loss (before its update)
  double end_s = 0;         // virtual time the last trainer finished the step
  double batch_time_s = 0;  // end_s minus the previous step's
  double read_s = 0, partition_s = 0, ssd_s = 0, train_s = 0;  // stages 1-4
  double pull_s = 0, gpu_s = 0, push_s = 0, allreduce_s = 0;   // parts of stage 4
  TierCounts counts;                                           // summed over shards
  int64_t disk_bytes = 0, net_bytes = 0;
  int64_t bytes_moved = 0;             // disk, network, SSD-PS and compaction bytes
  int64_t mem_rows = 0, ssd_keys = 0;  // resident in MEM-PS / stored in SSD-PS after the step
};

struct PsRunResult {
  summaries::PsRunSummary summary;  // summary.json's message
  std::vector<PsBatchRecord> batches;
  paramserver::CtrParameters parameters;  // dense from trainer 0, every key sorted
  std::vector<PsFaultRecord> faults;      // by time, then node
};

Status ExecutePsRun(PsPlan plan, const ExecuteOptions& options, PsRunResult* result);

// AUC on `examples` of the model `parameters` describe (a key they lack reads as InitRow); NaN if
// there are no examples or the parameters do not fit the model (no trainer reported its own).
double EvaluatePsAuc(const paramserver::CtrModelConfig& model,
                     const paramserver::CtrParameters& parameters,
                     std::span<const paramserver::Example> examples);

}  // namespace troupe
