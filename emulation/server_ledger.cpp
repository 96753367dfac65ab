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

void ServerLedger::ExpireUntil(double now_s) {
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (it->second.end_s <= now_s) {
      Release((it++)->first);
    } else {
      ++it;
    }
  }
}

Status ServerLedger::Grant(int64_t job_id, int32_t gpus, double cpus, double memory_gb,
                           double end_s, std::vector<int32_t>* gpu_ids) {
  if (leases_.count(job_id)) return Status::InvalidInput("job already holds a lease here");
  if (gpus < 0 || cpus < 0 || memory_gb < 0) return Status::InvalidInput("negative demand");
  if (gpus > free_gpus()) return Status::InvalidInput(Short("GPUs", gpus, free_gpus()));
  if (cpus > free_cpus() + kSlack) return Status::InvalidInput(Short("CPUs", cpus, free_cpus()));
  if (memory_gb > free_memory_gb() + kSlack) {
    return Status::InvalidInput(Short("memory GB", memory_gb, free_memory_gb()));
  }
  Leases::node_type node;
  if (spare_.empty()) {
    Leases fresh;
    node = fresh.extract(fresh.emplace(job_id, ServerLease{}).first);
  } else {
    node = std::move(spare_.back());
    spare_.pop_back();
  }
  node.key() = job_id;
  ServerLease& lease = node.mapped();
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
  gpu_ids->assign(lease.gpu_ids.begin(), lease.gpu_ids.end());
  leases_.insert(std::move(node));
  return Status::Ok();
}

Status ServerLedger::Resize(int64_t job_id, double cpus, double memory_gb) {
  auto it = leases_.find(job_id);
  if (it == leases_.end()) return Status::InvalidInput("job holds no lease here");
  const double more_cpus = cpus - it->second.cpus;
  const double more_memory = memory_gb - it->second.memory_gb;
  if (cpus < 0 || memory_gb < 0) return Status::InvalidInput("negative demand");
  if (more_cpus > free_cpus() + kSlack) {
    return Status::InvalidInput(Short("CPUs", more_cpus, free_cpus()));
  }
  if (more_memory > free_memory_gb() + kSlack) {
    return Status::InvalidInput(Short("memory GB", more_memory, free_memory_gb()));
  }
  used_cpus_ += more_cpus;
  used_memory_gb_ += more_memory;
  it->second.cpus = cpus;
  it->second.memory_gb = memory_gb;
  return Status::Ok();
}

bool ServerLedger::Release(int64_t job_id) {
  auto it = leases_.find(job_id);
  if (it == leases_.end()) return false;
  for (int32_t g : it->second.gpu_ids) gpu_owner_[g] = -1;
  free_gpus_ += static_cast<int32_t>(it->second.gpu_ids.size());
  used_cpus_ -= it->second.cpus;
  used_memory_gb_ -= it->second.memory_gb;
  if (leases_.size() == 1) used_cpus_ = used_memory_gb_ = 0;  // no drift from rounding
  spare_.push_back(leases_.extract(it));
  return true;
}

}  // namespace troupe
