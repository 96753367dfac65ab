#include "runner/cluster/run_summary.hpp"

#include <algorithm>
#include <cmath>

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

}  // namespace troupe
