// ServerLedger: one server's authoritative books — which GPU (by index), how many CPUs and how
// much memory each lease holds, and until when. A lease that would overcommit any resource is
// refused with the reason; nothing is ever overcommitted. Leases end at their end time (the next
// round's leases start then), or earlier by Release.
//
// A server grants and ends a handful of leases every round, and a round of a large cluster reads
// thousands of servers' books: a lease is a few words (its GPUs a bit mask: a server has at most
// kMaxGpus, the configuration's range), the books a short vector ordered by job id held inside
// the ledger itself up to 8 leases, so most servers' books are one block, moved with plain copies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "base/status.hpp"

namespace troupe {

struct ServerLease {
  int64_t job_id = 0;
  uint64_t gpu_mask = 0;  // bit g: GPU g is this lease's
  int32_t gpu_count = 0;  // bits set in gpu_mask
  double cpus = 0;
  double memory_gb = 0;
  double end_s = 0;

  // The GPU indices held, ascending.
  std::vector<int32_t> GpuIds() const;
};

class ServerLedger {
 public:
  static constexpr int32_t kMaxGpus = 64;

  // `gpus` is within [0, kMaxGpus] (config validation checks every server group's).
  ServerLedger(int32_t gpus, double cpus, double memory_gb);

  // Drops every lease that has ended by now_s.
  void ExpireUntil(double now_s);
  // Grants `gpus` GPUs (lowest free indices) and the CPUs and memory until end_s, and says which
  // in *gpu_ids unless it is null. Refuses with InvalidInput naming the short resource when it
  // would overcommit, or when the job already holds a lease here.
  Status Grant(int64_t job_id, int32_t gpus, double cpus, double memory_gb, double end_s,
               std::vector<int32_t>* gpu_ids);
  // A held lease of `gpus` GPUs, `cpus` CPUs and `memory_gb` now ends at end_s instead (a standing
  // lease: the same GPUs); false when the job holds none here, or one of another size. Calls in
  // ascending job id (a round's standing parts) find each lease without a search.
  bool Extend(int64_t job_id, int32_t gpus, double cpus, double memory_gb, double end_s);
  // Changes the CPUs and memory of a held lease; refuses when that would overcommit.
  Status Resize(int64_t job_id, double cpus, double memory_gb);
  // Ends a lease now; false when the job holds none here.
  bool Release(int64_t job_id);

  int32_t free_gpus() const { return free_gpus_; }
  double free_cpus() const { return cpus_ - used_cpus_; }
  double free_memory_gb() const { return memory_gb_ - used_memory_gb_; }
  // The lease the job holds here, or none.
  const ServerLease* Find(int64_t job_id) const;
  // The leases held, by job id.
  size_t lease_count() const { return leases_.size(); }
  const ServerLease& lease(size_t i) const { return leases_[i]; }

 private:
  // Where the job's lease is, or would be inserted: the first held lease of a job id >= job_id.
  size_t Position(int64_t job_id) const;
  // Gives a held lease's GPUs, CPUs and memory back (the caller drops the entry).
  void Free(const ServerLease& lease);

  const double cpus_;
  const double memory_gb_;
  uint64_t free_mask_ = 0;  // bit g: GPU g is free
  int32_t free_gpus_ = 0;
  double used_cpus_ = 0;
  double used_memory_gb_ = 0;
  absl::InlinedVector<ServerLease, 8> leases_;  // held, by job id
  size_t next_extended_ = 0;                    // where the lease after the last extended one is
};

}  // namespace troupe
