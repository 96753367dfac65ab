// Mechanism: places the jobs of one round. Jobs are offered GPUs in the policy's order; a job
// whose GPUs cannot all be had this round is skipped and the next one is tried (Synergy's
// simulator does the same), until the cluster's GPUs are used up. The ledger starts the round
// empty and ends it holding exactly what the returned placements lease. Mechanisms register
// themselves by name (mechanism_registry.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/placement.hpp"
#include "scheduling/queued_job.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

class AllocationSource;  // external_mechanism.hpp

// The GPUs a job may still be placed on: those of the servers not lost for good (every server in
// a run without faults), by GPU type (ClusterLedger's type indices).
struct SurvivingGpus {
  std::vector<int32_t> of_type;
  int32_t total = 0;
  int32_t servers_lost = 0;  // servers lost for good
  int32_t servers = 0;       // in the cluster
  bool operator==(const SurvivingGpus&) const = default;
};

class Mechanism {
 public:
  virtual ~Mechanism() = default;
  // The round about to be planned (its index and start on the run clock), told before its
  // PlaceRound calls; a mechanism that does not need it ignores it.
  virtual void StartRound(int64_t /*round*/, double /*now_s*/) {}
  virtual std::vector<JobPlacement> PlaceRound(const std::vector<const SchedJob*>& ordered,
                                               ClusterLedger& ledger) = 0;
  // PlaceRound over the head of a queue's order, each job with what a placement reads of it
  // (queued_job.hpp), as QueueOrder keeps them. A mechanism that reads no more of a job than
  // those need not read the job; by default the jobs are handed to PlaceRound.
  virtual std::vector<JobPlacement> PlaceHead(const std::vector<QueuedJob>& head,
                                              ClusterLedger& ledger);
  // The caller is done with a round's placements: a mechanism may keep the list's storage for
  // its next round (a large cluster's list is hundreds of kilobytes, fresh pages each round).
  virtual void Recycle(std::vector<JobPlacement>&& /*placements*/) {}
  // Why this mechanism will never place a job of `gpus` GPUs on what survives, for jobs.csv's
  // failure after "needs N GPUs; ", or "" when it may. The scheduler asks as a job arrives and
  // again whenever servers are lost for good, and fails the job at once rather than plan rounds
  // for it forever. By default a job spreads over as many servers as it takes, so it fits while
  // as many GPUs survive in all ("4 survive (3 of 4 servers lost for good)": the kNoLongerFits of
  // faults/run_invariants.hpp).
  virtual std::string WhyNeverPlaced(int32_t gpus, const SurvivingGpus& surviving) const;

 private:
  // PlaceHead's default: the head's jobs, kept from call to call so that handing a long head to
  // PlaceRound allocates nothing once it has been as long.
  std::vector<const SchedJob*> head_jobs_;
};

// What a config says about mechanisms beyond the name; each mechanism reads what concerns it.
struct MechanismOptions {
  // TUNE: place by (GPUs, CPUs, memory) demand, largest first, instead of the policy's order.
  bool tune_sort_by_demand = false;
  // "external" (external_mechanism.hpp): who proposes each round, and the built-in mechanism
  // that places a round whose proposal is refused.
  std::shared_ptr<AllocationSource> external;
  std::string external_fallback = "proportional";
  // Seconds each round lasts (the Gavel mechanisms reckon elapsed time in them): the config's
  // scheduler.round_s, whose default config/config.proto holds.
  double round_s = 0;
};

// A mechanism, as it registers itself (mechanism_registry.hpp).
struct MechanismDefinition {
  std::string_view name = {};     // what a config selects it by, e.g. "tune"
  std::string_view summary = {};  // one line for `troupe list`
  // A new instance for one run's scheduler (it may keep state from round to round).
  std::unique_ptr<Mechanism> (*make)(const MechanismOptions& options) = nullptr;
  // It never gives a job more CPUs or memory than its GPU-proportional share, so a job's
  // expected speed-up under it is 1 (ExpectedSpeedup, policy.hpp).
  bool proportional_share_only = false;
  // It reads the policy's order only until the GPUs are full, and a PlaceRound call leaves
  // nothing behind for the next (storage aside): the scheduler may plan a long queue's round over
  // a short head of the order first, and again over a longer one when that did not fill them.
  bool reads_until_full = false;
};

}  // namespace troupe::scheduling
