#include "emulation/server_ledger.hpp"

#include <algorithm>
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
    : gpus_(gpus), cpus_(cpus), memory_gb_(memory_gb), gpu_owner_(gpus, -1), free_gpus_(gpus) {}

size_t ServerLedger::Position(int64_t job_id) const {
  const auto held_end = leases_.begin() + static_cast<std::ptrdiff_t>(held_);
  const auto it =
      std::lower_bound(leases_.begin(), held_end, job_id,
                       [](const ServerLease& lease, int64_t id) { return lease.job_id < id; });
  return static_cast<size_t>(it - leases_.begin());
}

const ServerLease* ServerLedger::Find(int64_t job_id) const {
  const size_t i = Position(job_id);
  return i < held_ && leases_[i].job_id == job_id ? &leases_[i] : nullptr;
}

// In job id order, as Release would end them one by one (the sums subtract in that order); the
// leases kept close up in order, the ended ones go behind them.
void ServerLedger::ExpireUntil(double now_s) {
  const size_t held = held_;
  size_t kept = 0;
  for (size_t i = 0; i < held; ++i) {
    if (leases_[i].end_s <= now_s) {
      Free(leases_[i]);
    } else {
      if (i != kept) std::swap(leases_[kept], leases_[i]);
      ++kept;
    }
  }
}

Status ServerLedger::Grant(int64_t job_id, int32_t gpus, double cpus, double memory_gb,
                           double end_s, std::vector<int32_t>* gpu_ids) {
  const size_t at = Position(job_id);
  if (at < held_ && leases_[at].job_id == job_id) {
    return Status::InvalidInput("job already holds a lease here");
  }
  if (gpus < 0 || cpus < 0 || memory_gb < 0) return Status::InvalidInput("negative demand");
  if (gpus > free_gpus()) return Status::InvalidInput(Short("GPUs", gpus, free_gpus()));
  if (cpus > free_cpus() + kSlack) return Status::InvalidInput(Short("CPUs", cpus, free_cpus()));
  if (memory_gb > free_memory_gb() + kSlack) {
    return Status::InvalidInput(Short("memory GB", memory_gb, free_memory_gb()));
  }
  if (held_ == leases_.size()) leases_.emplace_back();
  // The first ended entry becomes the new lease, moved into its place by job id.
  std::rotate(leases_.begin() + static_cast<std::ptrdiff_t>(at),
              leases_.begin() + static_cast<std::ptrdiff_t>(held_),
              leases_.begin() + static_cast<std::ptrdiff_t>(held_ + 1));
  ++held_;
  ServerLease& lease = leases_[at];
  lease.job_id = job_id;
  lease.gpu_ids.clear();
  lease.cpus = cpus;
  lease.memory_gb = memory_gb;
  lease.end_s = end_s;
  for (int32_t g = 0; g < gpus_ && static_cast<int32_t>(lease.gpu_ids.size()) < gpus; ++g) {
    if (gpu_owner_[g] == -1) {
      gpu_owner_[g] = job_id;
      lease.gpu_ids.push_back(g);
    }
  }
  free_gpus_ -= gpus;
  used_cpus_ += cpus;
  used_memory_gb_ += memory_gb;
  if (gpu_ids != nullptr) gpu_ids->assign(lease.gpu_ids.begin(), lease.gpu_ids.end());
  return Status::Ok();
}

bool ServerLedger::Extend(int64_t job_id, int32_t gpus, double cpus, double memory_gb,
                          double end_s) {
  const size_t i = Position(job_id);
  if (i == held_ || leases_[i].job_id != job_id) return false;
  ServerLease& held = leases_[i];
  if (static_cast<int32_t>(held.gpu_ids.size()) != gpus || held.cpus != cpus ||
      held.memory_gb != memory_gb) {
    return false;
  }
  held.end_s = end_s;
  return true;
}

Status ServerLedger::Resize(int64_t job_id, double cpus, double memory_gb) {
  const size_t i = Position(job_id);
  if (i == held_ || leases_[i].job_id != job_id) {
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
  if (i == held_ || leases_[i].job_id != job_id) return false;
  ReleaseAt(i);
  return true;
}

void ServerLedger::Free(const ServerLease& lease) {
  for (int32_t g : lease.gpu_ids) gpu_owner_[g] = -1;
  free_gpus_ += static_cast<int32_t>(lease.gpu_ids.size());
  used_cpus_ -= lease.cpus;
  used_memory_gb_ -= lease.memory_gb;
  if (held_ == 1) used_cpus_ = used_memory_gb_ = 0;  // no drift from rounding
  --held_;
}

void ServerLedger::ReleaseAt(size_t i) {
  Free(leases_[i]);
  // The ended entry goes behind the held ones, its storage kept.
  std::rotate(leases_.begin() + static_cast<std::ptrdiff_t>(i),
              leases_.begin() + static_cast<std::ptrdiff_t>(i + 1),
              leases_.begin() + static_cast<std::ptrdiff_t>(held_ + 1));
}

}  // namespace troupe
