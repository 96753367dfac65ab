#include "scheduling/mechanism.hpp"

#include <string>

namespace troupe::scheduling {

std::vector<JobPlacement> Mechanism::PlaceHead(const std::vector<QueuedJob>& head,
                                               ClusterLedger& ledger) {
  head_jobs_.clear();
  for (const QueuedJob& job : head) head_jobs_.push_back(job.job);
  return PlaceRound(head_jobs_, ledger);
}

std::string Mechanism::WhyNeverPlaced(int32_t gpus, const SurvivingGpus& surviving) const {
  if (gpus <= surviving.total) return "";
  if (surviving.servers_lost == 0) return "the cluster has " + std::to_string(surviving.total);
  return std::to_string(surviving.total) + " survive (" + std::to_string(surviving.servers_lost) +
         " of " + std::to_string(surviving.servers) + " servers lost for good)";
}

}  // namespace troupe::scheduling
