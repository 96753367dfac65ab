#include "scheduling/server_ledger.hpp"

#include <algorithm>
#include <cassert>
#include <cstdio>

namespace troupe {
namespace {
constexpr double kSlack = 1e-9;  // sums of shares like 62.5 GB must not fail on rounding

std::string Short(const char* what, double want, double free) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s: wants %.3f, %.3f free", what, want, free);
  return buf;
}
}  // namespace

ServerLedger::ServerLedger(int32_t gpus, double cpus, double memory_gb)
    : cpus_(cpus), memory_gb_(memory_gb), free_gpus_(gpus) {
  assert(gpus >= 0 && gpus <= kMaxGpus);
  free_mask_ = gpus >= kMaxGpus ? ~uint64_t{0} : (uint64_t{1} << gpus) - 1;
}

std::vector<int32_t> ServerLease::GpuIds() const {
  std::vector<int32_t> ids;
  for (uint64_t m = gpu_mask; m != 0; m &= m - 1) ids.push_back(__builtin_ctzll(m));
  return ids;
}

size_t ServerLedger::Position(int64_t job_id) const {
  const auto it =
      std::lower_bound(leases_.begin(), leases_.end(), job_id,
                       [](const ServerLease& lease, int64_t id) { return lease.job_id < id; });
  return static_cast<size_t>(it - leases_.begin());
}

const ServerLease* ServerLedger::Find(int64_t job_id) const {
  const size_t i = Position(job_id);
  return i < leases_.size() && leases_[i].job_id == job_id ? &leases_[i] : nullptr;
}

// In job id order, as Release would end them one by one (the sums subtract in that order); the
// leases kept close up in order.
void ServerLedger::ExpireUntil(double now_s) {
  size_t kept = 0;
  for (size_t i = 0; i < leases_.size(); ++i) {
    if (leases_[i].end_s <= now_s) {
      Free(leases_[i]);
    } else {
      leases_[kept++] = leases_[i];
    }
  }
  leases_.resize(kept);
  if (leases_.empty()) used_cpus_ = used_memory_gb_ = 0;  // no drift from rounding
  next_extended_ = 0;  // the next round's standing parts start from the lowest job id
}

Status ServerLedger::Grant(int64_t job_id, int32_t gpus, double cpus, double memory_gb,
                           double end_s, std::vector<int32_t>* gpu_ids) {
  const size_t at = Position(job_id);
  if (at < leases_.size() && leases_[at].job_id == job_id) {
    return Status::InvalidInput("job already holds a lease here");
  }
  if (gpus < 0 || cpus < 0 || memory_gb < 0) return Status::InvalidInput("negative demand");
  if (gpus > free_gpus()) return Status::InvalidInput(Short("GPUs", gpus, free_gpus()));
  if (cpus > free_cpus() + kSlack) return Status::InvalidInput(Short("CPUs", cpus, free_cpus()));
  if (memory_gb > free_memory_gb() + kSlack) {
    return Status::InvalidInput(Short("memory GB", memory_gb, free_memory_gb()));
  }
  ServerLease lease{job_id, 0, gpus, cpus, memory_gb, end_s};
  // The lowest free indices: the lowest set bits of the free mask, one at a time.
  for (int32_t g = 0; g < gpus; ++g) {
    const uint64_t lowest = free_mask_ & (~free_mask_ + 1);
    lease.gpu_mask |= lowest;
    free_mask_ ^= lowest;
  }
  leases_.insert(leases_.begin() + static_cast<std::ptrdiff_t>(at), lease);
  free_gpus_ -= gpus;
  used_cpus_ += cpus;
  used_memory_gb_ += memory_gb;
  if (gpu_ids != nullptr) *gpu_ids = lease.GpuIds();
  return Status::Ok();
}

bool ServerLedger::Extend(int64_t job_id, int32_t gpus, double cpus, double memory_gb,
                          double end_s) {
  // Ahead of the last extended lease: a few steps forward (parts not standing here lie between);
  // behind it, a search.
  const size_t n = leases_.size();
  size_t i = std::min(next_extended_, n);
  if (i > 0 && leases_[i - 1].job_id >= job_id) {
    i = Position(job_id);
  } else {
    while (i < n && leases_[i].job_id < job_id) ++i;
  }
  if (i == n || leases_[i].job_id != job_id) return false;
  ServerLease& held = leases_[i];
  if (held.gpu_count != gpus || held.cpus != cpus || held.memory_gb != memory_gb) return false;
  held.end_s = end_s;
  next_extended_ = i + 1;
  return true;
}

Status ServerLedger::Resize(int64_t job_id, double cpus, double memory_gb) {
  const size_t i = Position(job_id);
  if (i == leases_.size() || leases_[i].job_id != job_id) {
    return Status::InvalidInput("job holds no lease here");
  }
  ServerLease& held = leases_[i];
  const double more_cpus = cpus - held.cpus;
  const double more_memory = memory_gb - held.memory_gb;
  if (cpus < 0 || memory_gb < 0) return Status::InvalidInput("negative demand");
  if (more_cpus > free_cpus() + kSlack) {
    return Status::InvalidInput(Short("CPUs", more_cpus, free_cpus()));
  }
  if (more_memory > free_memory_gb() + kSlack) {
    return Status::InvalidInput(Short("memory GB", more_memory, free_memory_gb()));
  }
  used_cpus_ += more_cpus;
  used_memory_gb_ += more_memory;
  held.cpus = cpus;
  held.memory_gb = memory_gb;
  return Status::Ok();
}

bool ServerLedger::Release(int64_t job_id) {
  const size_t i = Position(job_id);
  if (i == leases_.size() || leases_[i].job_id != job_id) return false;
  Free(leases_[i]);
  leases_.erase(leases_.begin() + static_cast<std::ptrdiff_t>(i));
  if (leases_.empty()) used_cpus_ = used_memory_gb_ = 0;  // no drift from rounding
  return true;
}

void ServerLedger::Free(const ServerLease& lease) {
  free_mask_ |= lease.gpu_mask;
  free_gpus_ += lease.gpu_count;
  used_cpus_ -= lease.cpus;
  used_memory_gb_ -= lease.memory_gb;
}

}  // namespace troupe
