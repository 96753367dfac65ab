// Synergy-TUNE: the deployed heuristic of the Synergy paper (OSDI '22, section 4).
//
// Runnable set: jobs in the policy's order whose GPUs still fit the cluster's free GPUs (CPUs and
// memory are ignored here), skipping a job that does not and going on: the same jobs the
// GPU-proportional mechanism places. They are placed in the policy's order, as Synergy's
// simulator does (its FIFO and SRTF schedulers do not re-sort), or — with sort_by_demand, as the
// paper's text describes — largest first: by GPUs, then ideal CPUs, then ideal memory per GPU,
// all descending (ties: policy order). On Synergy's workload the simulator's order is the one
// that reproduces the published JCTs (docs/synergy.md). For each job:
//   1. its ideal demand (demand.hpp) on the best fit: the server with the fewest free GPUs that
//      holds the whole part; a job whose GPUs fit no single server is spread over the fewest
//      servers (most free GPUs first) and takes its ideal on every part if every part fits;
//   2. else, where the ideal was above the proportional share, its fallback demand (the share,
//      or an ideal below it) on the best fit that holds it;
//   3. else the best fit by GPUs alone (every part, for a spread job) at the fallback demand,
//      making room by reverting co-resident parts that hold more than their proportional share
//      to exactly that share, just enough of them: parts of jobs on fewest servers first, then
//      most CPUs per GPU, then most memory per GPU.
// Step 3 always succeeds (the runnable GPUs fit, and a server whose parts are all at or below
// their share has the share of every free GPU), so no runnable job is left out. Every part holds
// its ideal (never below the proportional share's estimated throughput), its fallback or the
// share, so no job is estimated slower than at the proportional share; if every job falls back
// the round is the proportional baseline. Deterministic; the ledger ends holding exactly the
// returned placements, which are in placement order (not the policy's).
#pragma once

#include "scheduling/demand.hpp"
#include "scheduling/fit_index.hpp"
#include "scheduling/mechanism.hpp"

namespace troupe::scheduling {

namespace tune_detail {
// A runnable job as TUNE ranks it: placed in order of GPUs, then CPUs, then memory per GPU,
// largest first, then the policy's order; with its demands for the round.
struct Rank {
  int32_t gpus = 0;
  double cpus = 0, memory_gb = 0;
  size_t order = 0;
  RoundDemands::Job prepared;
  void* owner = nullptr;  // the job's keeper's entry (SchedJob::owner)
};
}  // namespace tune_detail

class TuneMechanism : public Mechanism {
 public:
  explicit TuneMechanism(bool sort_by_demand = false) : sort_by_demand_(sort_by_demand) {}
  std::vector<JobPlacement> PlaceRound(const std::vector<const SchedJob*>& ordered,
                                       ClusterLedger& ledger) override;
  std::vector<JobPlacement> PlaceHead(const std::vector<QueuedJob>& head,
                                      ClusterLedger& ledger) override;
  void Recycle(std::vector<JobPlacement>&& placements) override;

 private:
  // A co-resident part MakeRoom may revert to its share.
  struct Candidate {
    PlacementPart* part;
    AuxDemand share;
    size_t spans;  // the servers its job is on
    int32_t placement;
  };
  // One placed part in the per-server list: placements_[placement].parts[part].
  struct PartRef {
    int32_t placement = 0;
    int32_t part = 0;
    int32_t next = -1;  // next part on the same server, or -1
  };

  // PlaceRound over `jobs` jobs in the policy's order; job_at(i) is the i-th as a QueuedJob.
  template <class JobAt>
  std::vector<JobPlacement> PlaceInOrder(size_t jobs, ClusterLedger& ledger, const JobAt& job_at);
  // Places the job; `owner` is job->owner, read with the job's demands (JobPlacement::owner).
  // False: the wait-or-spread rule (rack_placement.hpp) held it back; nothing was placed.
  bool PlaceJob(const RoundDemands& demands, const RoundDemands::Job& job, void* owner,
                ClusterLedger& ledger);
  // The consolidated part of steps 1-3, written field by field into `part`: a part built
  // elsewhere and copied in is read back with wider loads than it was written with, and such a
  // load waits for the stores to drain (a round places thousands of jobs).
  void Consolidate(const RoundDemands& demands, const RoundDemands::Job& job, ClusterLedger& ledger,
                   PlacementPart& part);
  // The parts of a job no server holds.
  PlacementParts Spread(const RoundDemands& demands, const RoundDemands::Job& job,
                        ClusterLedger& ledger);
  // Reverts co-resident parts on `server` to their share until `need` and `gpus` fit there.
  void MakeRoom(const RoundDemands& demands, int32_t server, int32_t gpus, const AuxDemand& need,
                ClusterLedger& ledger);
  // Takes the parts of placements_.back() from the ledger and files them under their servers.
  void Record(ClusterLedger& ledger);

  bool sort_by_demand_;
  FitIndex index_;
  std::vector<tune_detail::Rank> runnable_;  // this round's, kept for the storage
  std::vector<JobPlacement> placements_;
  std::vector<int32_t> head_;  // per server: its first PartRef, or -1
  std::vector<PartRef> refs_;
  std::vector<Candidate> candidates_;  // MakeRoom's, kept for the storage
  std::vector<char> chosen_;
};

}  // namespace troupe::scheduling
