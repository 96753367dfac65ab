#include "runner/cluster/straggler_what_if.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "base/status_macros.hpp"
#include "runner/run_directory.hpp"

namespace troupe {
namespace {

// Each job's JCT by id (-1: it did not finish).
std::map<int64_t, double> JctById(const std::vector<JobRecord>& jobs) {
  std::map<int64_t, double> jct;
  for (const JobRecord& job : jobs) jct[job.job_id] = job.end_s >= 0 ? job.jct_s : -1;
  return jct;
}

std::map<int64_t, double> GpuSecondsById(const std::vector<JobRecord>& jobs) {
  std::map<int64_t, double> held;
  for (const JobRecord& job : jobs) held[job.job_id] = job.gpu_seconds;
  return held;
}

std::string Jct(double jct_s) { return jct_s >= 0 ? fmt::format("{:.3f}", jct_s) : ""; }

}  // namespace

Status PlanWithoutStragglers(const config::RunConfig& cfg, const std::string& config_name,
                             RunPlan* plan) {
  if (!cfg.faults().stragglers().what_if()) return Status::Ok();
  config::RunConfig without = cfg;
  without.mutable_faults()->clear_stragglers();
  auto replay = std::make_shared<RunPlan>();
  RETURN_IF_ERROR(PlanRun(without, config_name, replay.get()));
  replay->out_dir.clear();
  plan->without_stragglers = std::move(replay);
  return Status::Ok();
}

std::string StragglersCsv(const std::vector<JobRecord>& with,
                          const std::vector<JobRecord>& without) {
  const std::map<int64_t, double> jct_without = JctById(without);
  std::string csv = std::string(kStragglersCsvHeader) + "\n";
  for (const auto& [id, jct] : JctById(with)) {
    auto other = jct_without.find(id);
    const double jct_other = other == jct_without.end() ? -1 : other->second;
    const bool both = jct >= 0 && jct_other >= 0;
    csv += fmt::format("{},{},{},{}\n", id, Jct(jct), Jct(jct_other),
                       both ? fmt::format("{:.3f}", jct - jct_other) : "");
  }
  return csv;
}

int32_t CountStragglerFaults(const std::vector<FaultRecord>& faults) {
  return static_cast<int32_t>(std::count_if(faults.begin(), faults.end(), [](const FaultRecord& f) {
    return f.fault.find("(straggler:") != std::string::npos;
  }));
}

Status StageStragglersCsv(const std::string& out_dir, const std::vector<JobRecord>& with,
                          const std::vector<JobRecord>& without) {
  std::string csv = StragglersCsv(with, without);
  return StageFile(out_dir, "stragglers.csv", [&csv](std::string* chunk) {
    chunk->swap(csv);
    return false;
  });
}

void SummarizeStragglers(const std::vector<JobRecord>& with, const std::vector<JobRecord>& without,
                         int32_t slow_faults, summaries::ClusterRunSummary* summary) {
  const std::map<int64_t, double> jct_without = JctById(without);
  std::map<int64_t, double> held_with = GpuSecondsById(with),
                            held_without = GpuSecondsById(without);
  summaries::StragglerSummary* s = summary->mutable_stragglers();
  s->set_slow_faults(slow_faults);
  double sum_with = 0, sum_without = 0, extra_gpu_s = 0;
  int32_t compared = 0, slowed = 0;
  for (const auto& [id, jct] : JctById(with)) {
    auto other = jct_without.find(id);
    if (jct < 0 || other == jct_without.end() || other->second < 0) continue;
    ++compared;
    sum_with += jct;
    sum_without += other->second;
    extra_gpu_s += held_with[id] - held_without[id];
    if (jct > other->second) ++slowed;
  }
  s->set_jobs_compared(compared);
  s->set_jobs_slowed(slowed);
  s->set_jct_attributable_total_s(sum_with - sum_without);
  s->set_gpu_hours_attributable(extra_gpu_s / 3600);
  if (compared > 0) {
    s->set_jct_attributable_mean_s((sum_with - sum_without) / compared);
    s->set_jct_mean_with_s(sum_with / compared);
    s->set_jct_mean_without_s(sum_without / compared);
  }
}

}  // namespace troupe
