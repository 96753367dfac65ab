#include "faults/run_invariants.hpp"

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>

#include <limits>
#include <map>
#include <set>

namespace troupe {
namespace {

constexpr size_t kMaxViolations = 20;  // enough to diagnose; a broken run would print thousands

void Violation(InvariantReport& report, std::string text) {
  if (report.violations.size() < kMaxViolations) report.violations.push_back(std::move(text));
}

void CheckJobs(const InvariantInput& in, InvariantReport& report) {
  std::set<int64_t> seen;
  const bool all_should_end = in.end_reason == "all jobs finished";
  for (const JobRecord& job : *in.jobs) {
    if (!seen.insert(job.job_id).second)
      Violation(report, fmt::format("job {} recorded twice", job.job_id));
    const bool finished = job.end_s >= 0;
    const bool failed = !job.failure.empty();
    report.jobs_finished += finished;
    report.jobs_failed += failed;
    report.wasted_gpu_hours += job.wasted_gpu_s / 3600;
    if (finished && failed)
      Violation(report, fmt::format("job {} both finished and failed", job.job_id));
    if (all_should_end && !finished && !failed) {
      ++report.jobs_lost;
      Violation(report, fmt::format("job {} neither finished nor failed", job.job_id));
    }
  }
  if (all_should_end && in.jobs_expected > 0 &&
      static_cast<int64_t>(seen.size()) < in.jobs_expected) {
    report.jobs_lost += in.jobs_expected - static_cast<int64_t>(seen.size());
    Violation(report, fmt::format("{} of {} jobs have no record", in.jobs_expected - seen.size(),
                                  in.jobs_expected));
  }
}

void CheckCapacity(const InvariantInput& in, InvariantReport& report) {
  struct Use {
    std::set<int32_t> gpus;
    double cpus = 0, memory_gb = 0;
  };
  std::map<std::pair<int64_t, int32_t>, Use> use;
  std::map<std::pair<int64_t, int64_t>, std::set<int32_t>> servers_of_job;
  std::map<std::pair<int64_t, int64_t>, int32_t> gpus_of_job;
  for (const LeaseRecord& l : *in.leases) {
    if (l.server < 0 || static_cast<size_t>(l.server) >= in.servers.size()) {
      Violation(report, fmt::format("round {}: lease on unknown server {}", l.round, l.server));
      continue;
    }
    const ServerCapacity& cap = in.servers[l.server];
    Use& u = use[{l.round, l.server}];
    for (int32_t g : l.gpu_ids) {
      if (g < 0 || g >= cap.gpus || !u.gpus.insert(g).second) {
        Violation(report, fmt::format("round {} server {}: GPU {} invalid or leased twice", l.round,
                                      l.server, g));
      }
    }
    u.cpus += l.cpus;
    u.memory_gb += l.memory_gb;
    if (u.cpus > cap.cpus + 1e-6 || u.memory_gb > cap.memory_gb + 1e-6) {
      Violation(report, fmt::format("round {} server {}: over capacity ({:.3f} CPUs, {:.3f} GB)",
                                    l.round, l.server, u.cpus, u.memory_gb));
    }
    if (!servers_of_job[{l.round, l.job_id}].insert(l.server).second) {
      Violation(report, fmt::format("round {}: job {} leased server {} twice", l.round, l.job_id,
                                    l.server));
    }
    gpus_of_job[{l.round, l.job_id}] += static_cast<int32_t>(l.gpu_ids.size());
  }
  absl::flat_hash_map<int64_t, int32_t> asked;
  for (const JobRecord& job : *in.jobs) asked[job.job_id] = job.gpus;
  for (const auto& [key, gpus] : gpus_of_job) {
    auto it = asked.find(key.second);
    if (it != asked.end() && gpus > it->second) {
      Violation(report, fmt::format("round {}: job {} holds {} GPUs, asked for {}", key.first,
                                    key.second, gpus, it->second));
    }
  }
}

// No round that starts after a crash (and before the restart) leases what died.
void CheckDeadActors(const InvariantInput& in, InvariantReport& report) {
  if (!in.faults) return;
  std::map<int64_t, double> round_start;
  for (const RoundRecord& r : *in.rounds) round_start[r.round] = r.start_s;
  absl::flat_hash_map<int64_t, std::string> failed;
  for (const JobRecord& job : *in.jobs) {
    if (!job.failure.empty()) failed[job.job_id] = job.failure;
  }
  for (const FaultEvent& e : in.faults->events) {
    if (e.kind != FaultKind::kCrash) continue;
    const double until = e.duration_s > 0 ? e.EndS() : std::numeric_limits<double>::infinity();
    for (const LeaseRecord& l : *in.leases) {
      auto start = round_start.find(l.round);
      if (start == round_start.end() || start->second <= e.at_s || start->second >= until) continue;
      const bool on_dead_server = e.target.Contains(EndpointKind::kServer, l.server);
      const bool to_dead_job =
          e.target.Contains(EndpointKind::kJob, l.job_id) && failed.count(l.job_id) > 0;
      if (on_dead_server || to_dead_job) {
        Violation(report, fmt::format("round {} ({:.0f} s): job {} leased server {} after '{}'",
                                      l.round, start->second, l.job_id, l.server, e.Describe()));
      }
    }
  }
}

// A job that failed because it no longer fits ("needs N GPUs; ... servers lost for good") is
// legitimate only if the crashes that never restart leave fewer than N GPUs. A run whose plan
// kills `troupe node` processes is not judged: which servers a node held is not in the plan.
void CheckUnfittable(const InvariantInput& in, InvariantReport& report) {
  if (!in.faults) return;
  for (const FaultEvent& e : in.faults->events) {
    if (e.kind == FaultKind::kCrash && e.target.kind == EndpointKind::kNode) return;
  }
  int64_t surviving_gpus = 0;
  for (const ServerCapacity& server : in.servers) surviving_gpus += server.gpus;
  for (int64_t s : in.faults->ServersLostForGood(static_cast<int64_t>(in.servers.size()))) {
    surviving_gpus -= in.servers[s].gpus;
  }
  for (const JobRecord& job : *in.jobs) {
    if (job.failure.find(kNoLongerFits) == std::string::npos) continue;
    if (job.gpus > surviving_gpus) continue;
    Violation(report, fmt::format("job {} failed ('{}'), but {} GPUs survive every crash for good",
                                  job.job_id, job.failure, surviving_gpus));
  }
}

}  // namespace

InvariantReport CheckRunInvariants(const InvariantInput& in) {
  InvariantReport report;
  CheckJobs(in, report);
  CheckUnfittable(in, report);
  if (in.leases && in.rounds) {
    CheckCapacity(in, report);
    CheckDeadActors(in, report);
  }
  return report;
}

}  // namespace troupe
