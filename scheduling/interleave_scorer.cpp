#include "scheduling/interleave_scorer.hpp"

#include <algorithm>
#include <limits>

#include "scheduling/cluster_ledger.hpp"
#include "scheduling/sched_job.hpp"

namespace troupe::scheduling {

void InterleaveScorer::Clear() {
  noted_.clear();
  slot_of_job_.clear();
  slots_on_link_.clear();
}

fabric::CycleJob InterleaveScorer::CycleOf(const ClusterLedger& ledger, const SchedJob& job,
                                           const PlacementParts& parts) const {
  double type_speed = std::numeric_limits<double>::infinity();
  for (const PlacementPart& part : parts) {
    type_speed = std::min(type_speed, job.TypeSpeed(ledger.shape(part.server).gpu_type));
  }
  return fabric_.CycleOn(job.id, parts, job.iter_time_s / type_speed);
}

std::vector<fabric::LinkShare> InterleaveScorer::SharesOf(const fabric::CycleJob& cycle,
                                                          int64_t job_id) const {
  const std::vector<double>& capacity = fabric_.capacities();
  std::vector<fabric::LinkShare> shares;
  for (const auto& [link, demand] : cycle.link_demand) {
    fabric::LinkShare share{.capacity = capacity[link], .demand = demand, .others = {}};
    const auto on = slots_on_link_.find(link);
    if (on != slots_on_link_.end()) {
      for (size_t slot : on->second) {
        const auto& [other_id, other] = noted_[slot];
        if (other_id == job_id) continue;
        for (const auto& [l, d] : other.link_demand) {
          if (l == link) share.others.push_back({other.compute_s, other.burst_s, d, other.shift_s});
        }
      }
    }
    shares.push_back(std::move(share));
  }
  return shares;
}

double InterleaveScorer::Score(const ClusterLedger& ledger, const SchedJob& job,
                               const PlacementParts& parts) const {
  const fabric::CycleJob cycle = CycleOf(ledger, job, parts);
  if (cycle.link_demand.empty() || noted_.empty()) return 1;
  const std::vector<fabric::LinkShare> shares = SharesOf(cycle, job.id);
  if (cycle.shift_s >= 0) {
    return fabric::MeanScoreAt(cycle.compute_s, cycle.burst_s, cycle.shift_s, shares);
  }
  return fabric::BestShift(cycle.compute_s, cycle.burst_s, shares).score;
}

void InterleaveScorer::Note(const ClusterLedger& ledger, const SchedJob& job,
                            const PlacementParts& parts) {
  fabric::CycleJob cycle = CycleOf(ledger, job, parts);
  if (cycle.shift_s < 0) {
    cycle.shift_s =
        fabric::BestShift(cycle.compute_s, cycle.burst_s, SharesOf(cycle, job.id)).shift_s;
  }
  size_t slot = noted_.size();
  const auto known = slot_of_job_.find(job.id);
  if (known != slot_of_job_.end()) {  // noted again: its earlier spread is forgotten
    slot = known->second;
    for (const auto& [link, demand] : noted_[slot].second.link_demand) {
      std::erase(slots_on_link_[link], slot);
    }
    noted_[slot].second = std::move(cycle);
  } else {
    slot_of_job_[job.id] = slot;
    noted_.emplace_back(job.id, std::move(cycle));
  }
  for (const auto& [link, demand] : noted_[slot].second.link_demand) {
    slots_on_link_[link].push_back(slot);
  }
}

void InterleaveScorer::Forget(int64_t job_id) {
  const auto known = slot_of_job_.find(job_id);
  if (known == slot_of_job_.end()) return;
  fabric::CycleJob& cycle = noted_[known->second].second;
  for (const auto& [link, demand] : cycle.link_demand)
    std::erase(slots_on_link_[link], known->second);
  cycle.link_demand.clear();  // a later Note of the job fills its slot again
}

}  // namespace troupe::scheduling
