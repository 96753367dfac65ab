// ServerLedger: one server's authoritative books — which GPU (by index), how many CPUs and how
// much memory each lease holds, and until when. A lease that would overcommit any resource is
// refused with the reason; nothing is ever overcommitted. Leases end at their end time (the next
// round's leases start then), or earlier by Release.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.hpp"

namespace troupe {

struct ServerLease {
  int64_t job_id = 0;
  std::vector<int32_t> gpu_ids;
  double cpus = 0;
  double memory_gb = 0;
  double end_s = 0;
};

class ServerLedger {
 public:
  ServerLedger(int32_t gpus, double cpus, double memory_gb);

  // Drops every lease that has ended by now_s.
  void ExpireUntil(double now_s);
  // Grants `gpus` GPUs (lowest free indices) and the CPUs and memory until end_s. Refuses with
  // InvalidInput naming the short resource when it would overcommit, or when the job already
  // holds a lease here.
  Status Grant(int64_t job_id, int32_t gpus, double cpus, double memory_gb, double end_s,
               std::vector<int32_t>* gpu_ids);
  // Changes the CPUs and memory of a held lease; refuses when that would overcommit.
  Status Resize(int64_t job_id, double cpus, double memory_gb);
  // Ends a lease now; false when the job holds none here.
  bool Release(int64_t job_id);

  int32_t free_gpus() const { return free_gpus_; }
  double free_cpus() const { return cpus_ - used_cpus_; }
  double free_memory_gb() const { return memory_gb_ - used_memory_gb_; }
  const std::map<int64_t, ServerLease>& leases() const { return leases_; }

 private:
  using Leases = std::map<int64_t, ServerLease>;
  const int32_t gpus_;
  const double cpus_;
  const double memory_gb_;
  std::vector<int64_t> gpu_owner_;  // job id per GPU index, -1 when free
  int32_t free_gpus_ = 0;
  double used_cpus_ = 0;
  double used_memory_gb_ = 0;
  Leases leases_;  // by job id
  // Nodes of released leases, kept with their storage: a server grants and releases leases
  // every round, and reusing them spares an allocation per lease.
  std::vector<Leases::node_type> spare_;
};

}  // namespace troupe
