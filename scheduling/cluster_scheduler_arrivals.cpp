// The scheduler's arrivals: jobs the workload hands over become tracked queue entries, and the
// profiler's estimates replace their demands when they come.
#include <memory>
#include <string>

#include "scheduling/cluster_scheduler_internal.hpp"

namespace troupe::scheduling::engine_detail {
namespace {

bool IsMeasured(const ClusterSchedulerOptions& o, int64_t job_id) {
  return o.measure_first_job < 0 || (job_id >= o.measure_first_job && job_id <= o.measure_last_job);
}

// The arrival's matrix, shared with the model's earlier arrivals when it is the same (as it is
// for every job of a model under oracle profiling): a deep queue then holds one copy a model,
// not one a job.
std::shared_ptr<const SensitivityMatrix> SharedSensitivity(EngineState& st,
                                                           const std::string& model,
                                                           SensitivityMatrix&& matrix) {
  auto& shared = st.model_sensitivity[model];
  if (shared && shared->cpu_grid == matrix.cpu_grid && shared->memory_grid == matrix.memory_grid &&
      shared->values == matrix.values) {
    return shared;
  }
  auto own = std::make_shared<const SensitivityMatrix>(std::move(matrix));
  if (!shared) shared = own;
  return own;
}

}  // namespace

std::vector<ProfileAsk> Admit(EngineState& st, std::vector<Arrival>& arrived) {
  std::vector<ProfileAsk> asks;
  for (Arrival& a : arrived) {
    if (st.setup.profiler)
      asks.push_back(ProfileAsk{a.spec.job_id, a.spec.model, a.spec.arrival_s});
    TrackedJob t;
    const JobSpec& s = a.spec;
    scheduling::SchedJob& v = t.view;
    v.id = s.job_id;
    v.arrival_s = s.arrival_s;
    v.gpus = s.gpus;
    v.iter_time_s = a.iter_time_s;
    v.iterations_total = v.iterations_left = s.iterations;
    v.ideal_cpus_per_gpu = a.ideal_cpus_per_gpu;
    v.ideal_memory_gb_per_gpu = a.ideal_memory_gb_per_gpu;
    v.speedup_at_ideal = a.speedup_at_ideal;
    v.sensitivity = SharedSensitivity(st, s.model, std::move(a.sensitivity));
    if (st.options.type_speeds) {
      const auto speeds = st.options.type_speeds->find(s.model);
      if (speeds != st.options.type_speeds->end()) v.type_speed = speeds->second;
    }
    v.expected_speedup =
        scheduling::ExpectedSpeedup(st.mechanism_definition->proportional_share_only, v, nullptr);
    if (st.fabric && s.gpus > 1) st.fabric->Track(s.job_id, a.traffic);
    t.has_actor = a.has_actor;
    t.record.job_id = s.job_id;
    t.record.model = s.model;
    t.record.gpus = s.gpus;
    t.record.iterations = s.iterations;
    t.record.arrival_s = s.arrival_s;
    t.record.ideal_duration_s = static_cast<double>(s.iterations) * a.iter_time_s;
    t.record.measured = IsMeasured(st.options, s.job_id);
    if (t.record.measured) ++st.measured_arrived;
    if (s.trace_end != TraceEnd::kNone) st.trace_ends[s.job_id] = s.trace_end;
    st.queue.push_back(s.job_id);
    st.unchecked_arrivals.push_back(s.job_id);
    ++st.queued;
    Touch(st, s.job_id);
    TrackedJob& admitted = st.jobs.emplace(s.job_id, std::move(t)).first->second;
    admitted.view.owner = &admitted;  // a node's place is stable: placements lead back here
  }
  return asks;
}

void ApplyProfiles(EngineState& st, ProfileBatch& batch) {
  for (JobProfile& p : batch.profiles) {
    TrackedJob& job = st.jobs[p.job_id];
    job.view.ideal_cpus_per_gpu = p.ideal_cpus_per_gpu;
    job.view.ideal_memory_gb_per_gpu = p.ideal_memory_gb_per_gpu;
    job.view.speedup_at_ideal = p.speedup_at_ideal;
    job.view.sensitivity = std::make_shared<const SensitivityMatrix>(std::move(p.estimated));
    job.view.expected_speedup = scheduling::ExpectedSpeedup(
        st.mechanism_definition->proportional_share_only, job.view, nullptr);
    job.ready_at_s = p.ready_at_s;
    job.record.profiling_points = p.points_profiled;
    job.record.profiling_s = p.profiling_s;
    Touch(st, p.job_id);
  }
}

}  // namespace troupe::scheduling::engine_detail
