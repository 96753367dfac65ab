#include "runner/cluster/failure_records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "runner/run_directory.hpp"

namespace troupe {
namespace {

// Seconds a server that failed at at_s spent waiting for its repair before `end_s`.
double RepairWaitS(const ServerDownRecord& down, double end_s) {
  const double back_s = down.restart_at_s < 0 ? end_s : std::min(down.restart_at_s, end_s);
  return std::max(0.0, back_s - down.at_s);
}

struct CauseTally {
  int32_t servers_down = 0;
  int32_t jobs_hit = 0;
  double job_gpus_hit = 0;
  double repair_gpu_s = 0;
  int32_t repaired = 0;  // came back before the run's end
  double repaired_s = 0;
};

}  // namespace

std::string InterruptionsCsv(const std::vector<ServerDownRecord>& downs) {
  std::string csv = std::string(kInterruptionsCsvHeader) + "\n";
  for (const ServerDownRecord& d : downs) {
    csv += fmt::format("{:.3f},{},{},{},{:.3f},{},{}\n", d.at_s, d.server, d.gpus,
                       CsvField(d.cause), d.restart_at_s, d.jobs_hit, d.job_gpus_hit);
  }
  return csv;
}

void SummarizeFailures(const std::vector<ServerDownRecord>& downs, double end_s,
                       summaries::ClusterRunSummary* summary) {
  if (downs.empty()) return;
  std::map<std::string, CauseTally> by_cause;
  for (const ServerDownRecord& d : downs) {
    CauseTally& t = by_cause[d.cause];
    ++t.servers_down;
    t.jobs_hit += d.jobs_hit;
    t.job_gpus_hit += d.job_gpus_hit;
    t.repair_gpu_s += d.gpus * RepairWaitS(d, end_s);
    if (d.restart_at_s >= 0 && d.restart_at_s <= end_s) {
      ++t.repaired;
      t.repaired_s += d.restart_at_s - d.at_s;
    }
  }
  std::vector<std::pair<std::string, CauseTally>> ordered(by_cause.begin(), by_cause.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return a.second.servers_down > b.second.servers_down;
  });
  summaries::FailureSummary* out = summary->mutable_failures();
  double repair_gpu_s = 0;
  for (const auto& [cause, t] : ordered) {
    summaries::FailureCause* c = out->add_by_cause();
    c->set_cause(cause);
    c->set_servers_down(t.servers_down);
    c->set_jobs_hit(t.jobs_hit);
    c->set_job_gpus_hit(t.job_gpus_hit);
    c->set_repair_gpu_hours(t.repair_gpu_s / 3600);
    c->set_mean_repair_h(t.repaired > 0 ? t.repaired_s / t.repaired / 3600 : 0);
    out->set_servers_down(out->servers_down() + t.servers_down);
    out->set_jobs_hit(out->jobs_hit() + t.jobs_hit);
    repair_gpu_s += t.repair_gpu_s;
  }
  out->set_repair_gpu_hours(repair_gpu_s / 3600);
}

Status StageInterruptionsCsv(const std::string& out_dir,
                             const std::vector<ServerDownRecord>& downs) {
  std::string csv = InterruptionsCsv(downs);
  return StageFile(out_dir, "interruptions.csv", [&csv](std::string* chunk) {
    chunk->swap(csv);
    return false;
  });
}

}  // namespace troupe
