#include "scheduling/mechanism.hpp"

namespace troupe::scheduling {

std::vector<JobPlacement> Mechanism::PlaceHead(const std::vector<QueuedJob>& head,
                                               ClusterLedger& ledger) {
  head_jobs_.clear();
  for (const QueuedJob& job : head) head_jobs_.push_back(job.job);
  return PlaceRound(head_jobs_, ledger);
}

}  // namespace troupe::scheduling
