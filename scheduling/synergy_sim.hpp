// GREEDY and TUNE as Synergy's simulator codes them (msr-fiddle/synergy, simulator/resources/
// cluster.py, placement on: allocate_synergy_placement, _tune, _get_underutilized_servers,
// _reallocate_peer; simulator/schedulers/*_synergy_new.py), rule for rule, so that a replay of its
// runs agrees job for job with multi-GPU jobs too (docs/synergy.md). The mechanisms `greedy` and
// `tune` keep the paper's rules; these differ from them only where a job could span servers or
// TUNE must make room. A job of g GPUs at demand D (the whole job's CPUs and memory):
//   fit(D)  if g > 1, the server with the fewest free GPUs (ties: lowest index) that holds all of
//           D; else (and for g = 1) the servers with free GPUs by (free GPUs, index), each taking
//           GPUs one at a time while D/g more still fits there, a server that cannot take one
//           more left behind, until g are taken (a job can span servers its GPUs would fit one of).
//   GREEDY  fit(ideal), or the job is skipped this round.
//   TUNE    fit(ideal); else fit(fallback) (demand.hpp); else make room and fit(fallback) again.
//           Room is made on the first server (by index) with g free GPUs when g > 1, else on the
//           servers by (free GPUs, index) until g GPUs are counted; on each, the jobs placed
//           there (this round, in placement order, stably sorted by servers spanned, then CPUs
//           per GPU and memory per GPU of the whole job, most first) are reverted to their
//           fallback on every server they span, one after another, until the excess over the
//           share of those reverted covers what the job's share there lacks — a job with no
//           excess is reverted too (a no-op for it) and does not count.
// Every part holds D x its GPUs / g, so a spread job's parts run at the same estimated speed.
// Policy-dependent parts of Synergy's schedulers: its LAS first picks the jobs whose GPUs fit (in
// LAS order, skip and continue), then places only those, under TUNE largest GPU count first
// (stable), so under GREEDY a job whose CPUs or memory do not fit leaves its GPUs idle; its FIFO,
// SRTF and FTF place in policy order, skipping a job that does not fit and going on. The
// `_las` mechanisms are the former. Several GPU types, racks or a spread scorer on the ledger
// (which Synergy's code does not model) are placed by `greedy` / `tune` as they are. Deterministic;
// the ledger ends holding exactly the returned placements, in placement order.
#pragma once

#include <memory>
#include <vector>

#include "scheduling/demand.hpp"
#include "scheduling/fit_index.hpp"
#include "scheduling/mechanism.hpp"

namespace troupe::scheduling {

class SynergySimMechanism : public Mechanism {
 public:
  enum class Kind { kGreedy, kTune };
  // picked_first: Synergy's LAS (the jobs whose GPUs fit are picked before any is placed).
  SynergySimMechanism(Kind kind, bool picked_first, const MechanismOptions& options);
  std::vector<JobPlacement> PlaceRound(const std::vector<const SchedJob*>& ordered,
                                       ClusterLedger& ledger) override;

 private:
  // D at one level (ideal or fallback), and a bound at most D on every server.
  struct DemandLevel {
    AuxDemand (RoundDemands::*of)(const RoundDemands::Job&, int32_t, int32_t) const;
    AuxDemand (RoundDemands::*bound)(const RoundDemands::Job&) const;
  };
  static constexpr DemandLevel kIdeal{&RoundDemands::Ideal, &RoundDemands::IdealBound};
  static constexpr DemandLevel kFallback{&RoundDemands::Fallback, &RoundDemands::FallbackBound};
  struct Placed {
    RoundDemands::Job job;
    JobPlacement placement;
  };

  void Place(const RoundDemands& demands, const SchedJob& job, ClusterLedger& ledger);
  // fit(D) above at `level`; empty where it does not fit.
  PlacementParts Fit(const RoundDemands& demands, const RoundDemands::Job& job,
                     const DemandLevel& level, const ClusterLedger& ledger);
  // The servers TUNE makes room on, with the GPUs of the job counted there.
  std::vector<std::pair<int32_t, int32_t>> RoomServers(int32_t gpus,
                                                       const ClusterLedger& ledger) const;
  void MakeRoom(const RoundDemands& demands, const RoundDemands::Job& job, int32_t server,
                int32_t gpus, ClusterLedger& ledger);
  // A placed part at its share of the job's fallback demand.
  AuxDemand ShareOfPart(const RoundDemands& demands, const Placed& peer,
                        const PlacementPart& part) const;
  // Whether the first `reverted` of `peers`, all at their shares at once, fit every server.
  bool SharesFit(const RoundDemands& demands, const std::vector<int32_t>& peers, size_t reverted,
                 const ClusterLedger& ledger) const;
  void Commit(const RoundDemands::Job& job, PlacementParts parts, ClusterLedger& ledger);

  Kind kind_;
  bool picked_first_;
  std::unique_ptr<Mechanism> paper_;  // `greedy` or `tune`, for what Synergy's code does not model
  std::vector<Placed> placed_;
  std::vector<std::vector<int32_t>> on_server_;  // per server: indices into placed_, in order
  FitIndex index_;  // of the ledger, updated on every Take and Give this round
};

}  // namespace troupe::scheduling
