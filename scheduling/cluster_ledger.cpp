#include "scheduling/cluster_ledger.hpp"

#include <algorithm>
#include <cassert>

namespace troupe::scheduling {
ClusterLedger::ClusterLedger(std::vector<ServerShape> servers) : shapes_(std::move(servers)) {
  int32_t max_gpus = 0;
  for (const ServerShape& s : shapes_) {
    per_gpu_.push_back(PerGpu{s.cpus / s.gpus, s.memory_gb / s.gpus});
    total_gpus_ += s.gpus;
    max_gpus = std::max(max_gpus, s.gpus);
    if (s.gpu_type >= static_cast<int32_t>(gpus_of_type_.size())) {
      gpus_of_type_.resize(s.gpu_type + 1, 0);
    }
    gpus_of_type_[s.gpu_type] += s.gpus;
  }
  if (gpus_of_type_.empty()) gpus_of_type_.push_back(0);
  by_free_gpus_.assign(max_gpus + 1, ServerSet(server_count()));
  free_ = shapes_;
  free_gpus_ = total_gpus_;
  is_touched_.assign(shapes_.size(), false);
  for (int32_t s = 0; s < server_count(); ++s) by_free_gpus_[shapes_[s].gpus].insert(s);
}

// Only the servers planned on since the last reset change back (a round used to clear and refill
// every bucket).
void ClusterLedger::Reset() {
  for (int32_t s : touched_) {
    if (free_[s].gpus != shapes_[s].gpus) Move(s, shapes_[s].gpus);
    free_[s] = shapes_[s];
    is_touched_[s] = false;
  }
  touched_.clear();
  free_gpus_ = total_gpus_;
  if (scorer_) scorer_->Clear();
}

void ClusterLedger::Move(int32_t server, int32_t free_gpus) {
  if (racks_) rack_free_gpus_[racks_->rack_of_server[server]] += free_gpus - free_[server].gpus;
  by_free_gpus_[free_[server].gpus].erase(server);
  by_free_gpus_[free_gpus].insert(server);
  free_[server].gpus = free_gpus;
}

void ClusterLedger::SetRacks(std::shared_ptr<const RackLayout> racks) {
  racks_ = std::move(racks);
  rack_free_gpus_.clear();
  if (!racks_) return;
  rack_free_gpus_.assign(racks_->racks(), 0);
  for (int32_t s = 0; s < server_count(); ++s) {
    rack_free_gpus_[racks_->rack_of_server[s]] += free_[s].gpus;
  }
}

void ClusterLedger::Touch(int32_t server) {
  if (is_touched_[server]) return;
  is_touched_[server] = true;
  touched_.push_back(server);
}

void ClusterLedger::Take(int32_t server, int32_t gpus, double cpus, double memory_gb) {
  assert(Fits(server, gpus, cpus, memory_gb));
  Touch(server);
  ServerShape& f = free_[server];
  if (gpus != 0) Move(server, f.gpus - gpus);
  f.cpus -= cpus;
  f.memory_gb -= memory_gb;
  free_gpus_ -= gpus;
}

void ClusterLedger::Give(int32_t server, int32_t gpus, double cpus, double memory_gb) {
  Touch(server);
  ServerShape& f = free_[server];
  if (gpus != 0) Move(server, f.gpus + gpus);
  f.cpus += cpus;
  f.memory_gb += memory_gb;
  free_gpus_ += gpus;
}

}  // namespace troupe::scheduling
