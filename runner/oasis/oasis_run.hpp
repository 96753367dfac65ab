// An OASiS online-scheduling run (RunConfig.oasis; docs/oasis.md).
//
// PlanOasisRun turns a checked config into an OasisPlan: the cluster and the seeded diurnal job
// stream (scheduling/oasis/workload_gen.hpp, seed run.seed), the policy and, for OASiS, its prices
// (EstimatePrices over a past stream drawn with seed + 1000003, the paper's L and U, scaled by
// low_scale/high_scale; scheduling/oasis/prices.hpp). ExecuteOasisRun spawns the
// scheduler actor (actors/oasis/oasis_scheduler_actor.hpp), which spawns a job actor per admitted
// job, drives it on the run's ActorRuntime until slot T - 1 is over, and writes the run directory
// when the plan names one, all of it or nothing:
//   summary.json  policy, counts, total utility, messages and events, violations; the jobs
//                 behind their plan and the utility they lost, and, with oasis.ps_link_slowdown
//                 or oasis.link_delay_s set or a fabric, the slot simulator's utility for the
//                 same jobs
//   jobs.csv      one row a job: id, arrival, admitted, reason (a rejection's, or why it fell
//                 behind its plan), planned end, actual end, utility
//   slots.csv     one row a slot: active jobs, workers, PS, utilisation per resource of each pool,
//                 OASiS's prices per resource (mean over the machines of each kind; 0 otherwise)
//
// A fabric block spans worker servers 0..H-1 then PS machines H..H+K-1 (actors/oasis/
// oasis_fabric.hpp). Errors: bad input is InvalidInput (a fabric that does not fit H + K servers,
// or ps_link_slowdown set beside it); a stalled emulation is Internal. Emulated runs are
// deterministic: the same plan gives byte-identical jobs.csv and slots.csv.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/oasis/oasis_scheduler_actor.hpp"
#include "base/status.hpp"
#include "base/status_or.hpp"
#include "config/config.pb.h"
#include "messages/summary.pb.h"
#include "runner/execute_options.hpp"
#include "runtime/actor_runtime.hpp"
#include "scheduling/oasis/dorm.hpp"
#include "scheduling/oasis/prices.hpp"
#include "scheduling/oasis/workload_gen.hpp"

namespace troupe {

struct OasisPlan {
  scheduling::oasis::WorkloadSpec spec;
  scheduling::oasis::Cluster cluster;
  std::vector<scheduling::oasis::Job> jobs;
  std::string policy;  // oasis.policy
  scheduling::oasis::PriceParams prices;
  double low_factor = 0;  // applied to the estimate (oasis.low_scale)
  scheduling::oasis::DormOptions dorm;
  OasisLinks links;  // oasis.ps_link_slowdown, oasis.link_delay_s, the fabric block
  RuntimeOptions runtime;
  std::string config_name;
  std::string mode;
  uint64_t seed = 0;    // run.seed
  std::string out_dir;  // "" writes nothing
};

// Precondition: ValidateConfig(cfg) is OK and cfg.has_oasis().
Status PlanOasisRun(const config::RunConfig& cfg, const std::string& config_name, OasisPlan* plan);

struct OasisRunResult {
  summaries::OasisRunSummary summary;  // summary.json's message
  OasisRecords records;
};

Status ExecuteOasisRun(OasisPlan plan, const ExecuteOptions& options, OasisRunResult* result);

// Writes summary.json, jobs.csv and slots.csv into a staging folder beside out_dir, then moves
// it onto out_dir (replacing a folder there).
Status WriteOasisRunDirectory(const std::string& out_dir, const OasisRunResult& result);
std::string OasisJobsCsv(const std::vector<OasisJobRow>& jobs);
std::string OasisSlotsCsv(const std::vector<OasisSlotRow>& slots);
std::string FormatOasisSummary(const summaries::OasisRunSummary& s);

}  // namespace troupe
