// ServerLedger: one server's authoritative books — which GPU (by index), how many CPUs and how
// much memory each lease holds, and until when. A lease that would overcommit any resource is
// refused with the reason; nothing is ever overcommitted. Leases end at their end time (the next
// round's leases start then), or earlier by Release.
//
// A server grants and ends a handful of leases every round, so the books are a short vector
// ordered by job id whose ended entries keep their storage for the next leases: no allocation
// per lease once a server has held its most leases at once. A server of up to 8 GPUs keeps its
// books inside the ledger itself (a round of a large cluster reads thousands of servers' books:
// one block each, not three).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "base/status.hpp"

namespace troupe {

struct ServerLease {
  int64_t job_id = 0;
  // Inline up to 8 (most servers have no more): a round books every server's leases, and ids
  // held apart from the lease were one more cold read each.
  absl::InlinedVector<int32_t, 8> gpu_ids;
  double cpus = 0;
  double memory_gb = 0;
  double end_s = 0;
};

class ServerLedger {
 public:
  ServerLedger(int32_t gpus, double cpus, double memory_gb);

  // Drops every lease that has ended by now_s.
  void ExpireUntil(double now_s);
  // Grants `gpus` GPUs (lowest free indices) and the CPUs and memory until end_s, and says which
  // in *gpu_ids unless it is null. Refuses with InvalidInput naming the short resource when it
  // would overcommit, or when the job already holds a lease here.
  Status Grant(int64_t job_id, int32_t gpus, double cpus, double memory_gb, double end_s,
               std::vector<int32_t>* gpu_ids);
  // A held lease of `gpus` GPUs, `cpus` CPUs and `memory_gb` now ends at end_s instead (a standing
  // lease: the same GPUs); false when the job holds none here, or one of another size.
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
  size_t lease_count() const { return held_; }
  const ServerLease& lease(size_t i) const { return leases_[i]; }

 private:
  // Where the job's lease is, or would be inserted: the first held lease of a job id >= job_id.
  size_t Position(int64_t job_id) const;
  // Ends the held lease at index i (the books' order is kept).
  void ReleaseAt(size_t i);
  // Gives a held lease's GPUs, CPUs and memory back and counts it no longer held.
  void Free(const ServerLease& lease);

  const int32_t gpus_;
  const double cpus_;
  const double memory_gb_;
  absl::InlinedVector<int64_t, 8> gpu_owner_;  // job id per GPU index, -1 when free
  int32_t free_gpus_ = 0;
  double used_cpus_ = 0;
  double used_memory_gb_ = 0;
  // The first held_ entries are the leases held, by job id; the rest are ended entries kept for
  // their storage.
  absl::InlinedVector<ServerLease, 8> leases_;
  size_t held_ = 0;
};

}  // namespace troupe
