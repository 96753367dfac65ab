// ClusterLedger: the scheduler's planning view of what each server has free during one round.
// Re-planned from empty every round (every lease lasts one round). Capacities never go negative:
// Take() is only legal after Fits() said yes.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "scheduling/rack_layout.hpp"
#include "scheduling/server_set.hpp"
#include "scheduling/spread_scorer.hpp"

namespace troupe::scheduling {

struct ServerShape {
  int32_t gpus = 0;
  double cpus = 0;
  double memory_gb = 0;
  int32_t gpu_type = 0;  // index into the run's GPU types; 0 on a cluster that names none
};

class ClusterLedger {
 public:
  explicit ClusterLedger(std::vector<ServerShape> servers);

  // Frees everything: the start of a round.
  void Reset();

  int32_t server_count() const { return static_cast<int32_t>(shapes_.size()); }
  const ServerShape& shape(int32_t server) const { return shapes_[server]; }
  const ServerShape& free(int32_t server) const { return free_[server]; }
  int32_t total_gpus() const { return total_gpus_; }
  int32_t free_gpus() const { return free_gpus_; }
  // GPU types on the cluster (1 + the largest ServerShape::gpu_type) and GPUs of each.
  int32_t type_count() const { return static_cast<int32_t>(gpus_of_type_.size()); }
  int32_t gpus_of_type(int32_t type) const { return gpus_of_type_[type]; }

  // CPUs and memory in proportion to `gpus` on this server (capacity / GPUs per GPU). Asked for
  // every job of every round: the per-GPU quotients are kept, so each is one multiplication.
  double ProportionalCpus(int32_t server, int32_t gpus) const {
    return per_gpu_[server].cpus * gpus;
  }
  double ProportionalMemoryGb(int32_t server, int32_t gpus) const {
    return per_gpu_[server].memory_gb * gpus;
  }

  int32_t max_server_gpus() const { return static_cast<int32_t>(by_free_gpus_.size()) - 1; }
  // Servers with exactly `free_gpus` GPUs free, in index order: best-fit searches walk these
  // buckets instead of every server.
  const ServerSet& ServersWithFreeGpus(int32_t free_gpus) const { return by_free_gpus_[free_gpus]; }
  // The fewest free GPUs, at least `gpus` (> 0), that some server has, or -1: a count a bucket,
  // no server sought (BestFitGpus takes the bucket's first server).
  int32_t FewestFreeGpusAtLeast(int32_t gpus) const {
    if (gpus <= 0) return -1;
    for (int32_t free = gpus; free <= max_server_gpus(); ++free) {
      if (!by_free_gpus_[free].empty()) return free;
    }
    return -1;
  }
  bool SomeServerHasFreeGpus(int32_t gpus) const { return FewestFreeGpusAtLeast(gpus) >= 0; }

  // Inline: a best-fit search asks at every server it tries.
  bool Fits(int32_t server, int32_t gpus, double cpus, double memory_gb) const {
    const ServerShape& f = free_[server];
    return gpus <= f.gpus && cpus <= f.cpus + kFitSlack && memory_gb <= f.memory_gb + kFitSlack;
  }
  void Take(int32_t server, int32_t gpus, double cpus, double memory_gb);
  void Give(int32_t server, int32_t gpus, double cpus, double memory_gb);

  // The fabric's racks, when placement follows them (scheduling/rack_placement.hpp); null: it
  // does not. Free GPUs are then also kept per rack.
  void SetRacks(std::shared_ptr<const RackLayout> racks);
  const RackLayout* racks() const { return racks_.get(); }
  int32_t rack_free_gpus(int32_t rack) const { return rack_free_gpus_[rack]; }
  // What chooses among a job's candidate spreads (fabric.placement interleave); null: the
  // first spread is taken. Reset clears what it noted.
  void SetSpreadScorer(std::shared_ptr<SpreadScorer> scorer) { scorer_ = std::move(scorer); }
  SpreadScorer* spread_scorer() const { return scorer_.get(); }
  // When the round being planned starts (the wait-or-spread rule reads it).
  void set_round_start_s(double start_s) { round_start_s_ = start_s; }
  double round_start_s() const { return round_start_s_; }

 private:
  // Shares like 62.5 GB x 3 are summed and subtracted in floating point; a tolerance keeps an
  // exact fit from being refused for a rounding error.
  static constexpr double kFitSlack = 1e-9;
  std::vector<ServerShape> shapes_;
  std::vector<ServerShape> free_;
  struct PerGpu {
    double cpus = 0, memory_gb = 0;
  };
  std::vector<PerGpu> per_gpu_;                  // capacity / GPUs, per server
  void Move(int32_t server, int32_t free_gpus);  // to another bucket; sets free_[server].gpus
  void Touch(int32_t server);                    // Reset restores it

  std::vector<ServerSet> by_free_gpus_;
  std::vector<int32_t> touched_;  // servers taken from or given to since the last Reset
  std::vector<bool> is_touched_;
  std::vector<int32_t> gpus_of_type_;
  int32_t total_gpus_ = 0;
  int32_t free_gpus_ = 0;
  std::shared_ptr<const RackLayout> racks_;
  std::vector<int32_t> rack_free_gpus_;
  std::shared_ptr<SpreadScorer> scorer_;
  double round_start_s_ = 0;
};

}  // namespace troupe::scheduling
