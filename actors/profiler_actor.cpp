#include "actors/profiler_actor.hpp"

#include <algorithm>

namespace troupe {
namespace {

scheduling::DatasetModel DatasetOf(const ModelProfile& model) {
  scheduling::DatasetModel d;
  d.dataset_gb_per_gpu = model.dataset_gb_per_gpu;
  d.storage_throughput = model.storage_throughput;
  d.min_memory_gb_per_gpu = model.min_memory_gb_per_gpu;
  d.thrash_throughput = model.thrash_throughput;
  return d;
}

// When a profiling server can take a job that arrived at arrival_s, and books it until done.
double BookServer(ProfilerState& st, double arrival_s, double duration_s) {
  if (st.server_free_at_s.empty()) return arrival_s + duration_s;
  auto earliest = std::min_element(st.server_free_at_s.begin(), st.server_free_at_s.end());
  const double start = std::max(arrival_s, *earliest);
  *earliest = start + duration_s;
  return *earliest;
}

JobProfile Profile(ProfilerState& st, const ProfileAsk& ask) {
  const ModelProfile* model = st.catalog->Find(ask.model);
  const scheduling::ProfilingOptions& options = st.config.options;
  scheduling::MeasureFn measure;
  if (options.noise_stddev > 0) {
    measure = scheduling::NoisyMeasure(model->sensitivity, options.noise_stddev,
                                       [&st] { return st.rng->Uniform01(); });
  }
  const scheduling::DemandVector catalogue_ideal{
      model->ideal_cpus_per_gpu, model->ideal_memory_gb_per_gpu, model->speedup_at_ideal};
  scheduling::ProfileResult r = scheduling::ProfileJob(model->sensitivity, catalogue_ideal,
                                                       DatasetOf(*model), options, measure);
  JobProfile p;
  p.job_id = ask.job_id;
  p.estimated = std::move(r.estimated);
  p.ideal_cpus_per_gpu = r.ideal_cpus_per_gpu;
  p.ideal_memory_gb_per_gpu = r.ideal_memory_gb_per_gpu;
  p.speedup_at_ideal = r.speedup_at_ideal;
  p.points_profiled = r.points_profiled;
  p.profiling_s = r.profiling_s;
  p.ready_at_s = BookServer(st, ask.arrival_s, r.profiling_s);
  return p;
}

}  // namespace

caf::behavior ProfilerActor(caf::stateful_actor<ProfilerState>* self, ProfilerConfig config,
                            std::shared_ptr<const ModelCatalog> catalog, Telemetry* telemetry) {
  ProfilerState& st = self->state;
  st.rng = std::make_unique<Rng>(config.seed);
  st.server_free_at_s.assign(std::max(0, config.servers), 0.0);
  st.config = std::move(config);
  st.catalog = std::move(catalog);
  st.telemetry = telemetry;
  return {
      [=](const ProfileRequest& request) {
        ProfilerState& st = self->state;
        ProfileBatch batch;
        for (const ProfileAsk& ask : request.asks) batch.profiles.push_back(Profile(st, ask));
        return batch;
      },
  };
}

}  // namespace troupe
