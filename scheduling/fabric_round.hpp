// The fabric as the round engine sees it (docs/network.md). Each round, every placed job whose
// GPUs span servers opens its all-reduce's flows (fabric/collective.hpp) on the fabric's links;
// the flows share the links max-min (fabric/flow_sharing.hpp), re-shared only where the round's
// flows differ from the last round's; a job's communication per iteration follows from its
// slowest flow's rate (fluid) or from its bursts meeting the others' (phased, fabric/phased.hpp).
// A job inside one server crosses no link and is never looked at. Under LinkPriority::kGpuIntensity
// a job's flows share links in proportion to its GPU intensity (docs/network.md, "Link
// priority"), a weight that follows from its own placement and compute alone. A link slowed by
// a straggler (FabricModel::slowdowns) has, in a round, its capacity times the factor in force at
// the round's start; its flows are re-shared where that changes, as where the flows change.
//
// Contract: Plan gives each placement of the round the exposed communication seconds per
// iteration it runs with (added to its compute: an iteration takes compute + network_s, never
// less than its communication, so no link carries more than its capacity) and what
// that would be were the job alone on the fabric; the same placements after the same history give
// the same figures. Credit books the iterations a job ran in the round (its communication and
// contention seconds, the bytes its flows put on each link); CloseRound hands over the round's
// link records. Plain code: no actor, no clock.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "fabric/collective.hpp"
#include "fabric/flow_sharing.hpp"
#include "fabric/interleave.hpp"
#include "fabric/link_slowdowns.hpp"
#include "fabric/topology.hpp"
#include "messages/records.hpp"
#include "scheduling/placement.hpp"

namespace troupe::scheduling {

enum class TrafficModel : int8_t { kFluid, kPhased };

// How flows that share a link split it (config LinkPriority).
enum class LinkPriority : int8_t {
  kFair,          // max-min: every flow the same weight
  kGpuIntensity,  // weighted max-min by each job's GPU intensity (PriorityWeight)
};

// The run's fabric: its topology and how jobs use it (config::Fabric).
struct FabricModel {
  fabric::Topology topology;
  fabric::Collective collective = fabric::Collective::kHierarchicalRing;
  TrafficModel traffic = TrafficModel::kFluid;
  double comm_overlap = -1;  // the hidden share of every model's communication; -1: the model's
  LinkPriority priority = LinkPriority::kFair;
  double max_priority_ratio = 16;  // kGpuIntensity: the most one job's weight exceeds another's
  // fabric.placement interleave (kPhased only): candidate spreads a placement scores
  // (scheduling/interleave_scorer.hpp), and each round's jobs are time-shifted so their bursts
  // interleave (fabric/interleave.hpp). 0: neither.
  int32_t interleave_candidates = 0;
  // Links slowed for stretches of the run (`link` stragglers); empty: every link keeps its
  // capacity.
  fabric::LinkSlowdowns slowdowns;
};

// Crux's GPU intensity of a job ("Crux: GPU-Efficient Communication Scheduling for Deep Learning
// Training", SIGCOMM '24): the GPU-seconds of compute an iteration holds per second of its
// communication alone on the fabric, gpus x compute_s / solo_comm_s. Its flows' weight under
// kGpuIntensity is that intensity held within [1, max_ratio] (1 where it is not a number), so no
// two jobs' weights differ by more than max_ratio.
double PriorityWeight(int32_t gpus, double compute_s, double solo_comm_s, double max_ratio);

// What a job's gradient exchange needs of its model (workload/model_catalog.hpp).
struct JobTraffic {
  double gradient_bytes = 0;
  double comm_overlap = 0;  // the share of its communication hidden behind compute
};

// A placed job's communication in a round.
struct JobNetworkRound {
  double network_s = 0;  // exposed seconds per iteration at its share (0: inside one server)
  double solo_s = 0;     // the same, alone on the fabric
  bool changed = false;  // network_s differs from the job's last round (or it did not run then)
};

struct FabricRoundState;

class FabricRound {
 public:
  explicit FabricRound(std::shared_ptr<const FabricModel> model);
  ~FabricRound();

  // Jobs as they arrive (a job never tracked opens no flow) and once they ended.
  void Track(int64_t job_id, const JobTraffic& traffic);
  void Forget(int64_t job_id);

  // The links' capacities of a round that starts at start_s (FabricModel::slowdowns): CycleOn,
  // capacities() and the next Plan see them. A job's communication alone is at these capacities.
  void AtTime(double start_s);

  // Seconds one iteration of the placement's job computes at its share: how much communication
  // it can hide, and the phased model's gaps between bursts.
  using ComputeSeconds = std::function<double(size_t placement)>;
  // The round's flows, shared; by placement index.
  const std::vector<JobNetworkRound>& Plan(const std::vector<JobPlacement>& placements,
                                           const ComputeSeconds& compute_s, double round_s);
  // The job ran `iterations` of the round planned last: its communication and contention seconds
  // and the bytes its flows put on each link are booked.
  void Credit(int64_t job_id, int64_t iterations);
  // What every job that crossed the fabric spent on it, by job id.
  std::vector<JobNetworkRecord> SpentByJob() const;
  // The links that carried a flow this round (the records of `round`), appended to `out`.
  void CloseRound(int64_t round, double start_s, double end_s, std::vector<LinkRecord>* out);

  // The bursts the job would put on the fabric placed on `parts` (each link it crosses with its
  // demand while it sends, its exposed burst alone), computing compute_s an iteration; shift_s:
  // the time-shift it keeps when it runs on those parts already, else -1. No links: untracked,
  // or inside one server.
  fabric::CycleJob CycleOn(int64_t job_id, const PlacementParts& parts, double compute_s) const;

  const FabricModel& model() const { return *model_; }
  const std::vector<double>& capacities() const;  // bytes per second, by link, as of AtTime

 private:
  std::shared_ptr<const FabricModel> model_;
  std::unique_ptr<FabricRoundState> st_;
};

}  // namespace troupe::scheduling
