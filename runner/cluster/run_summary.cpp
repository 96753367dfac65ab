#include "runner/cluster/run_summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace troupe {

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double h = (static_cast<double>(sorted.size()) - 1) * q;
  size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

namespace {

double Fraction(double used, double available) { return available > 0 ? used / available : 0; }

void SummarizeJobs(const std::vector<JobRecord>& jobs, summaries::ClusterRunSummary* summary) {
  std::vector<double> jct;
  int64_t finished_jobs = 0, measured = 0, failed = 0;
  double wasted_gpu_s = 0;
  for (const JobRecord& job : jobs) {
    bool finished = job.end_s >= 0;
    failed += !job.failure.empty();
    wasted_gpu_s += job.wasted_gpu_s;
    finished_jobs += finished;
    measured += job.measured;
    if (job.measured && finished) jct.push_back(job.jct_s);
  }
  summary->set_jobs_total(static_cast<int32_t>(jobs.size()));
  summary->set_jobs_finished(static_cast<int32_t>(finished_jobs));
  summary->set_jobs_measured(static_cast<int32_t>(measured));
  summary->set_jobs_measured_finished(static_cast<int32_t>(jct.size()));
  summary->set_jobs_failed(static_cast<int32_t>(failed));
  summary->set_wasted_gpu_hours(wasted_gpu_s / 3600);
  std::sort(jct.begin(), jct.end());
  double sum = 0;
  for (double x : jct) sum += x;  // ascending order: the same sum for the same set of jobs
  summary->set_jct_mean_s(jct.empty() ? 0 : sum / static_cast<double>(jct.size()));
  summary->set_jct_median_s(Quantile(jct, 0.50));
  summary->set_jct_p95_s(Quantile(jct, 0.95));
  summary->set_jct_p99_s(Quantile(jct, 0.99));
}

void SummarizeRounds(const std::vector<RoundRecord>& rounds, const ClusterCapacity& capacity,
                     summaries::ClusterRunSummary* summary) {
  double makespan = 0, gpu_time = 0, cpu_time = 0, memory_time = 0;
  for (const RoundRecord& r : rounds) {
    double length = r.end_s - r.start_s;
    makespan = std::max(makespan, r.end_s);
    gpu_time += r.gpus_allocated * length;
    cpu_time += r.cpus_allocated * length;
    memory_time += r.memory_gb_allocated * length;
  }
  summary->set_rounds(static_cast<int32_t>(rounds.size()));
  summary->set_makespan_s(makespan);
  summary->set_gpu_utilisation(Fraction(gpu_time, static_cast<double>(capacity.gpus) * makespan));
  summary->set_cpu_utilisation(Fraction(cpu_time, capacity.cpus * makespan));
  summary->set_memory_utilisation(Fraction(memory_time, capacity.memory_gb * makespan));
}

}  // namespace

void Summarize(const std::vector<JobRecord>& jobs, const std::vector<RoundRecord>& rounds,
               const ClusterCapacity& capacity, summaries::ClusterRunSummary* summary) {
  SummarizeJobs(jobs, summary);
  SummarizeRounds(rounds, capacity, summary);
}

namespace {

// The costs in seconds of the job at its full size: a smaller lease's GPU-seconds over the job's
// GPUs (unchanged for a job that never ran smaller).
JobRecovery AtFullSize(const JobRecord& job, const JobRecovery& costs) {
  JobRecovery full = costs;
  if (job.gpus <= 0) return full;
  full.checkpoint_s -= costs.unheld_checkpoint_gpu_s / job.gpus;
  full.restart_s -= costs.unheld_restart_gpu_s / job.gpus;
  full.lost_s -= costs.unheld_lost_gpu_s / job.gpus;
  full.cut_short_s -= costs.unheld_cut_short_gpu_s / job.gpus;
  return full;
}

}  // namespace

double HeldS(const JobRecord& job, const JobRecovery& costs) {
  return (job.gpus > 0 ? job.gpu_seconds / job.gpus : 0) + AtFullSize(job, costs).cut_short_s;
}

double EffectiveRatio(const JobRecord& job, const JobRecovery& costs) {
  const double held_s = HeldS(job, costs);
  if (!(held_s > 0)) return 0;
  const JobRecovery full = AtFullSize(job, costs);
  return (held_s - full.checkpoint_s - full.restart_s - full.lost_s) / held_s;
}

void SummarizeRecovery(const std::vector<JobRecord>& jobs,
                       const std::vector<JobRecoveryRecord>& recovery,
                       summaries::ClusterRunSummary* summary) {
  std::map<int64_t, const JobRecovery*> costs_of;
  for (const JobRecoveryRecord& r : recovery) costs_of[r.job_id] = &r.costs;
  summaries::RecoverySummary* out = summary->mutable_recovery();
  const JobRecovery none;
  double held = 0, lost = 0, restart = 0, checkpoint = 0, ratio_min = 1;
  int64_t checkpoints = 0, interruptions = 0;
  bool any = false;
  for (const JobRecord& job : jobs) {
    const auto it = costs_of.find(job.job_id);
    const JobRecovery& c = it == costs_of.end() ? none : *it->second;
    const double held_s = HeldS(job, c);
    if (!(held_s > 0)) continue;
    any = true;
    const JobRecovery full = AtFullSize(job, c);
    held += job.gpus * held_s;
    lost += job.gpus * full.lost_s;
    restart += job.gpus * full.restart_s;
    checkpoint += job.gpus * full.checkpoint_s;
    checkpoints += c.checkpoints;
    interruptions += c.interruptions;
    ratio_min = std::min(ratio_min, EffectiveRatio(job, c));
  }
  const double productive = held - lost - restart - checkpoint;
  out->set_effective_training_ratio(held > 0 ? productive / held : 0);
  out->set_effective_training_ratio_min(any ? ratio_min : 0);
  out->set_held_gpu_hours(held / 3600);
  out->set_productive_gpu_hours(productive / 3600);
  out->set_lost_work_gpu_hours(lost / 3600);
  out->set_restart_gpu_hours(restart / 3600);
  out->set_checkpoint_gpu_hours(checkpoint / 3600);
  out->set_checkpoints(static_cast<int32_t>(checkpoints));
  out->set_interruptions(static_cast<int32_t>(interruptions));
}

}  // namespace troupe
