#include "agent/job_request.hpp"

#include <cmath>
#include <string>

#include "base/status_macros.hpp"

namespace troupe::agent_wire {
namespace {

constexpr size_t kMaxGridPoints = 64;
constexpr size_t kMaxNameBytes = 128;

bool Finite(double x) { return std::isfinite(x); }

Status Bad(const std::string& field, const std::string& why) {
  return Status::InvalidInput("register: job." + field + ": " + why);
}

Status CheckGrid(const std::string& field, const google::protobuf::RepeatedField<double>& grid) {
  if (grid.empty()) return Bad(field, "is empty");
  if (static_cast<size_t>(grid.size()) > kMaxGridPoints) {
    return Bad(field,
               std::to_string(grid.size()) + " points, at most " + std::to_string(kMaxGridPoints));
  }
  for (int i = 0; i < grid.size(); ++i) {
    if (!Finite(grid[i]) || !(grid[i] >= 0)) {
      return Bad(field + "[" + std::to_string(i) + "]", "must be finite and >= 0");
    }
    if (i > 0 && !(grid[i] > grid[i - 1])) {
      return Bad(field + "[" + std::to_string(i) + "]", "the grid must be strictly ascending");
    }
  }
  return Status::Ok();
}

Status FromSensitivity(const agent::JobRequest& r, ArrivedJob* arrived) {
  const agent::Sensitivity& m = r.sensitivity();
  RETURN_IF_ERROR(CheckGrid("sensitivity.cpu_grid", m.cpu_grid()));
  RETURN_IF_ERROR(CheckGrid("sensitivity.memory_grid", m.memory_grid()));
  const size_t cells = static_cast<size_t>(m.cpu_grid_size()) * m.memory_grid_size();
  if (static_cast<size_t>(m.values_size()) != cells) {
    return Bad("sensitivity.values", std::to_string(m.values_size()) + " values for a " +
                                         std::to_string(m.cpu_grid_size()) + " x " +
                                         std::to_string(m.memory_grid_size()) + " grid");
  }
  for (int i = 0; i < m.values_size(); ++i) {
    if (!Finite(m.values(i)) || !(m.values(i) > 0)) {
      return Bad("sensitivity.values[" + std::to_string(i) + "]", "must be finite and > 0");
    }
  }
  if (!m.has_ideal_cpus_per_gpu() || !Finite(m.ideal_cpus_per_gpu()) ||
      !(m.ideal_cpus_per_gpu() > 0)) {
    return Bad("sensitivity.ideal_cpus_per_gpu", "must be given, finite and > 0");
  }
  if (!m.has_ideal_memory_gb_per_gpu() || !Finite(m.ideal_memory_gb_per_gpu()) ||
      !(m.ideal_memory_gb_per_gpu() > 0)) {
    return Bad("sensitivity.ideal_memory_gb_per_gpu", "must be given, finite and > 0");
  }
  if (!r.has_iter_time_s() || !Finite(r.iter_time_s()) || !(r.iter_time_s() > 0)) {
    return Bad("iter_time_s", "must be given with a sensitivity, finite and > 0");
  }
  SensitivityMatrix& s = arrived->sensitivity;
  s.cpu_grid.assign(m.cpu_grid().begin(), m.cpu_grid().end());
  s.memory_grid.assign(m.memory_grid().begin(), m.memory_grid().end());
  s.values.assign(m.values().begin(), m.values().end());
  arrived->iter_time_s = r.iter_time_s();
  arrived->ideal_cpus_per_gpu = m.ideal_cpus_per_gpu();
  arrived->ideal_memory_gb_per_gpu = m.ideal_memory_gb_per_gpu();
  arrived->speedup_at_ideal = s.At(m.ideal_cpus_per_gpu(), m.ideal_memory_gb_per_gpu());
  arrived->spec.model = r.name().empty() ? "agent" : r.name();
  return Status::Ok();
}

}  // namespace

Status MakeArrivedJob(const agent::JobRequest& r, const ModelCatalog& catalog,
                      const JobRequestLimits& limits, int64_t job_id, double arrival_s,
                      ArrivedJob* arrived) {
  if (r.name().size() > kMaxNameBytes) {
    return Bad("name", std::to_string(r.name().size()) + " bytes, at most " +
                           std::to_string(kMaxNameBytes));
  }
  if (!r.has_gpus() || r.gpus() < 1 || r.gpus() > limits.cluster_gpus) {
    return Bad("gpus", "must be in [1, " + std::to_string(limits.cluster_gpus) +
                           "] (the cluster's GPUs), got " + std::to_string(r.gpus()));
  }
  if (!r.has_iterations() || r.iterations() < 1 || r.iterations() > kMaxAgentIterations) {
    return Bad("iterations", "must be in [1, 2^40], got " + std::to_string(r.iterations()));
  }
  if (r.has_model() == r.has_sensitivity()) {
    return Bad("model", "give exactly one of job.model (a catalogue model) and job.sensitivity");
  }
  *arrived = ArrivedJob{};
  if (r.has_model()) {
    const ModelProfile* profile = catalog.Find(r.model());
    if (profile == nullptr) return Bad("model", "'" + r.model() + "' is not in the catalogue");
    arrived->iter_time_s = profile->iter_time_s;
    arrived->ideal_cpus_per_gpu = profile->ideal_cpus_per_gpu;
    arrived->ideal_memory_gb_per_gpu = profile->ideal_memory_gb_per_gpu;
    arrived->speedup_at_ideal = profile->speedup_at_ideal;
    arrived->sensitivity = profile->sensitivity;
    arrived->spec.model = profile->name;
  } else {
    RETURN_IF_ERROR(FromSensitivity(r, arrived));
  }
  arrived->spec.job_id = job_id;
  arrived->spec.gpus = r.gpus();
  arrived->spec.iterations = r.iterations();
  arrived->spec.arrival_s = arrival_s;
  return Status::Ok();
}

}  // namespace troupe::agent_wire
