#include "messages/lease_assembly.hpp"

#include <algorithm>
#include <utility>

namespace troupe {

LeaseAssembly::Outcome LeaseAssembly::Add(const LeaseGrant& grant) { return AddGrant(grant); }

LeaseAssembly::Outcome LeaseAssembly::Add(LeaseGrant&& grant) { return AddGrant(std::move(grant)); }

template <class Grant>
LeaseAssembly::Outcome LeaseAssembly::AddGrant(Grant&& grant) {
  if (grant.start_s < start_s_) return Outcome::kStale;
  if (grant.start_s > start_s_) {
    StartOver(grant.round, grant.start_s, grant.end_s, grant.parts,
              std::forward<Grant>(grant).scheduler);
  }
  if (ended_) return Outcome::kEnded;
  if (std::find(servers_seen_.begin(), servers_seen_.end(), grant.server) != servers_seen_.end()) {
    return Outcome::kDuplicate;
  }
  servers_seen_.push_back(grant.server);
  refused_ = refused_ || !grant.granted;
  if (grant.granted) {
    parts_.push_back(LeasePart{.server = grant.server,
                               .gpu_ids = std::forward<Grant>(grant).gpu_ids,
                               .cpus = grant.cpus,
                               .memory_gb = grant.memory_gb});
    // The first part sets the speed (a GPU type faster than the reference runs above 1).
    speed_ = parts_.size() == 1 ? grant.speed : std::min(speed_, grant.speed);
    network_s_ = std::max(network_s_, grant.network_s);
  }
  return Outcome::kAdded;
}

bool LeaseAssembly::Runnable(int32_t job_gpus) const {
  return complete() && !refused_ && gpus() == job_gpus;
}

int32_t LeaseAssembly::gpus() const {
  int32_t gpus = 0;
  for (const LeasePart& part : parts_) gpus += static_cast<int32_t>(part.gpu_ids.size());
  return gpus;
}

double LeaseAssembly::cpus() const {
  double cpus = 0;
  for (const LeasePart& part : parts_) cpus += part.cpus;
  return cpus;
}

double LeaseAssembly::memory_gb() const {
  double memory_gb = 0;
  for (const LeasePart& part : parts_) memory_gb += part.memory_gb;
  return memory_gb;
}

// The vectors keep their memory: a job takes a lease every round.
void LeaseAssembly::StartOver(int64_t round, double start_s, double end_s, int32_t parts,
                              scheduler_actor scheduler) {
  round_ = round;
  start_s_ = start_s;
  end_s_ = end_s;
  parts_expected_ = parts;
  servers_seen_.clear();
  parts_.clear();
  refused_ = false;
  ended_ = false;
  speed_ = 1;
  network_s_ = 0;
  scheduler_ = std::move(scheduler);
}

void LeaseAssembly::Restand(int64_t round, double start_s, double end_s,
                            std::vector<LeasePart> parts) {
  round_ = round;
  start_s_ = start_s;
  end_s_ = end_s;
  parts_ = std::move(parts);
  ended_ = false;
}

}  // namespace troupe
