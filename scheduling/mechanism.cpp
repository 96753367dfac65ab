#include "scheduling/mechanism.hpp"

namespace troupe::scheduling {

std::vector<JobPlacement> Mechanism::PlaceHead(const std::vector<QueuedJob>& head,
                                               ClusterLedger& ledger) {
  std::vector<const SchedJob*> ordered;
  ordered.reserve(head.size());
  for (const QueuedJob& job : head) ordered.push_back(job.job);
  return PlaceRound(ordered, ledger);
}

}  // namespace troupe::scheduling
