#include "scheduling/allocation_check.hpp"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <cmath>
#include <string>

namespace troupe::scheduling {
namespace {

std::string Num(double x) {
  std::string s = std::to_string(x);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// The fault of one part taken alone (empty: none); `servers_of_job` collects the job's servers.
std::string PartFault(const PlacementPart& part, const ClusterLedger& ledger,
                      absl::flat_hash_set<int32_t>& servers_of_job) {
  if (part.server < 0 || part.server >= ledger.server_count()) {
    return "server " + std::to_string(part.server) + " does not exist (the cluster has " +
           std::to_string(ledger.server_count()) + ")";
  }
  if (!servers_of_job.insert(part.server).second) {
    return "a second part on server " + std::to_string(part.server);
  }
  if (part.gpus < 1) return "gpus " + std::to_string(part.gpus) + " (at least 1)";
  if (!std::isfinite(part.cpus) || part.cpus < 0) return "cpus " + Num(part.cpus);
  if (!std::isfinite(part.memory_gb) || part.memory_gb < 0) {
    return "memory_gb " + Num(part.memory_gb);
  }
  return "";
}

std::string Overcommit(int32_t server, const ServerShape& free, int32_t gpus, double cpus,
                       double memory_gb) {
  std::string what;
  if (gpus > free.gpus) what = std::to_string(gpus) + " GPUs";
  if (what.empty() && cpus > free.cpus) what = Num(cpus) + " CPUs";
  if (what.empty()) what = Num(memory_gb) + " GB of memory";
  return "overcommits server " + std::to_string(server) + ": " + what + " wanted, " +
         std::to_string(free.gpus) + " GPUs, " + Num(free.cpus) + " CPUs and " +
         Num(free.memory_gb) + " GB free";
}

}  // namespace

Status TakeAllocation(const std::vector<const SchedJob*>& offered,
                      const std::vector<JobPlacement>& proposed, ClusterLedger& ledger) {
  absl::flat_hash_map<int64_t, const SchedJob*> by_id;
  for (const SchedJob* job : offered) by_id.emplace(job->id, job);
  absl::flat_hash_set<int64_t> placed;
  // Parts are taken on a copy, so that a refused allocation leaves the ledger bit for bit as it
  // was (taking and giving back the same share need not restore a double exactly).
  ClusterLedger trial = ledger;
  for (size_t i = 0; i < proposed.size(); ++i) {
    const JobPlacement& p = proposed[i];
    const std::string where =
        "placement " + std::to_string(i) + " (job " + std::to_string(p.job_id) + ")";
    auto it = by_id.find(p.job_id);
    if (it == by_id.end()) return Status::InvalidInput(where + ": not a job of this round");
    if (!placed.insert(p.job_id).second) {
      return Status::InvalidInput(where + ": the job is placed twice");
    }
    if (p.parts.empty()) return Status::InvalidInput(where + ": no parts");
    absl::flat_hash_set<int32_t> servers;
    int64_t gpus = 0;
    for (size_t k = 0; k < p.parts.size(); ++k) {
      const PlacementPart& part = p.parts[k];
      const std::string fault = PartFault(part, trial, servers);
      if (!fault.empty()) {
        return Status::InvalidInput(where + " part " + std::to_string(k) + ": " + fault);
      }
      gpus += part.gpus;
    }
    if (gpus != it->second->gpus) {
      return Status::InvalidInput(where + ": " + std::to_string(gpus) + " GPUs, the job needs " +
                                  std::to_string(it->second->gpus) + " (all or none)");
    }
    for (size_t k = 0; k < p.parts.size(); ++k) {
      const PlacementPart& part = p.parts[k];
      if (!trial.Fits(part.server, part.gpus, part.cpus, part.memory_gb)) {
        return Status::InvalidInput(
            where + " part " + std::to_string(k) + ": " +
            Overcommit(part.server, trial.free(part.server), part.gpus, part.cpus, part.memory_gb));
      }
      trial.Take(part.server, part.gpus, part.cpus, part.memory_gb);
    }
  }
  ledger = std::move(trial);
  return Status::Ok();
}

}  // namespace troupe::scheduling
