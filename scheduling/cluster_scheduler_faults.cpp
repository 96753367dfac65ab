// The engine's faults and recovery (cluster_scheduler.hpp, docs/faults.md): servers and jobs that
// go down and come back, reports asked for again, jobs that no longer fit, and the state a
// restarted scheduler rebuilds.
#include <algorithm>
#include <cmath>
#include <string>

#include "scheduling/cluster_scheduler_internal.hpp"

namespace troupe::scheduling::engine_detail {
namespace {

std::string GpusNeeded(int32_t gpus) {
  return "needs " + std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
}

}  // namespace

bool AwaitedThisRound(const EngineState& st, const TrackedJob& job) {
  return st.round >= 0 && job.reported_round != st.round &&
         std::find(st.round_jobs.begin(), st.round_jobs.end(), job.record.job_id) !=
             st.round_jobs.end();
}

void FailJobsThatNoLongerFit(EngineState& st) {
  SurvivingGpus surviving;
  surviving.of_type.assign(st.ledger->type_count(), 0);
  surviving.servers = static_cast<int32_t>(st.server_up.size());
  for (size_t s = 0; s < st.server_up.size(); ++s) {
    if (!st.server_up[s] && st.server_back_at_s[s] < 0) {
      ++surviving.servers_lost;
    } else if (!st.spare[s]) {  // a spare never takes a placement
      const ServerShape& shape = st.ledger->shape(static_cast<int32_t>(s));
      surviving.of_type[shape.gpu_type] += shape.gpus;
      surviving.total += shape.gpus;
    }
  }
  // Only the new arrivals, unless what survives changed since the queue was last asked.
  std::vector<int64_t> arrivals = std::move(st.unchecked_arrivals);
  st.unchecked_arrivals.clear();
  const bool whole_queue = surviving != st.fit_checked;
  if (whole_queue) st.fit_checked = surviving;
  bool failed = false;
  for (int64_t id : whole_queue ? st.queue : arrivals) {
    auto it = st.jobs.find(id);
    if (it == st.jobs.end()) continue;  // erased already
    TrackedJob& job = it->second;
    if (job.done) continue;
    const std::string why = st.mechanism->WhyNeverPlaced(job.view.gpus, surviving);
    if (why.empty()) continue;
    RecordFailed(st, job, GpusNeeded(job.view.gpus) + "; " + why);
    failed = true;
  }
  // A run that lost nothing for good and fails nothing: not a single change.
  if (failed || surviving.servers_lost > 0) EraseDoneJobs(st);
}

void ArmGrace(EngineState& st) {
  if (st.options.report_grace_s <= 0 || st.grace_pending) return;
  st.grace_pending = true;
  st.out->GraceAfter(st.round, st.options.report_grace_s);
}

}  // namespace troupe::scheduling::engine_detail
