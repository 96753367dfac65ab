#include "runner/cluster/run_setup.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

#include "base/status_macros.hpp"
#include "config/scheduler_names.hpp"
#include "faults/failure_model.hpp"
#include "runner/cluster/fabric_plan.hpp"
#include "runner/cluster/gpu_type_plan.hpp"
#include "runner/cluster/straggler_what_if.hpp"
#include "runner/deployment.hpp"
#include "workload/synergy_generator.hpp"
#include "workload/trace_reader.hpp"

namespace troupe {
namespace {

Status LoadCatalog(const config::Workload& w, const std::string& config_name,
                   std::shared_ptr<const ModelCatalog>* out) {
  if (!w.has_models_dir() || w.models_dir().empty()) {
    // The built-in catalogue lives for the whole process.
    ASSIGN_OR_RETURN(const ModelCatalog* builtin, ModelCatalog::LoadBuiltIn());
    *out = std::shared_ptr<const ModelCatalog>(builtin, [](const auto*) {});
    return Status::Ok();
  }
  if (!std::filesystem::is_directory(w.models_dir())) {
    return Status::InvalidInput(config_name + ": workload.models_dir: no such folder: '" +
                                w.models_dir() + "'");
  }
  auto catalog = std::make_shared<ModelCatalog>();
  Status s = ModelCatalog::LoadFromDir(w.models_dir(), catalog.get());
  *out = std::move(catalog);
  return s;
}

void PlanServers(const config::RunConfig& cfg, RunPlan* plan) {
  for (const config::ServerGroup& group : cfg.cluster().servers()) {
    for (int32_t i = 0; i < group.count(); ++i) {
      ServerSpec spec;
      spec.index = static_cast<int32_t>(plan->servers.size());
      spec.name = group.name() + "-" + std::to_string(i);
      spec.gpus = group.gpus();
      spec.cpus = group.cpus();
      spec.memory_gb = group.memory_gb();
      plan->capacity.gpus += spec.gpus;
      plan->capacity.cpus += spec.cpus;
      plan->capacity.memory_gb += spec.memory_gb;
      plan->servers.push_back(std::move(spec));
    }
  }
  plan->server_nodes.assign(plan->servers.size(), "");
  for (const config::Placement& p : cfg.placement()) {
    for (int32_t s = p.first_server(); s <= p.last_server(); ++s) plan->server_nodes[s] = p.node();
  }
  for (const config::Host& h : cfg.deployment().host()) {
    for (int32_t s = h.first_server(); s <= h.last_server(); ++s)
      plan->server_nodes[s] = h.address();
  }
}

// A measurement window (run.measure_first_job..run.measure_last_job) that holds none of the
// workload's jobs would end in a summary of zeros: refused before anything runs. `in_window`
// counts the workload's jobs with an id in [first, last] (first <= last); `workload` names it.
// Sets plan->jobs_measured.
Status CheckWindow(const config::Run& r, const std::string& config_name,
                   const std::function<int64_t(int64_t, int64_t)>& in_window,
                   const std::string& workload, RunPlan* plan) {
  const int64_t first = r.measure_first_job(), last = r.measure_last_job();
  if (first < 0) return Status::Ok();  // every job is measured
  plan->jobs_measured = last >= first ? in_window(first, last) : 0;
  if (plan->jobs_measured > 0) return Status::Ok();
  return Status::InvalidInput(config_name + ": run.measure_first_job..run.measure_last_job (" +
                              std::to_string(first) + ".." + std::to_string(last) +
                              ") matches no job of the workload (" + workload +
                              "); measure jobs it has, or set both to -1 to measure every job");
}

Status OpenTrace(const config::Workload& w, const config::Run& r, const std::string& config_name,
                 RunPlan* plan) {
  TraceOptions options;
  options.format = static_cast<TraceFormat>(static_cast<int>(w.trace_format()));
  options.max_jobs = w.max_jobs();
  const config::Generator& g = w.generator();
  options.image_percent = g.image_percent();
  options.language_percent = g.language_percent();
  options.speech_percent = g.speech_percent();
  options.field = config_name + ": workload.trace_file";
  options.replay_job_failures = plan->replay_job_failures = w.replay_job_failures();
  if (!std::filesystem::exists(w.trace_file())) {
    return Status::InvalidInput(config_name + ": workload.trace_file: no such file: '" +
                                w.trace_file() + "'");
  }
  if (std::filesystem::is_directory(w.trace_file())) {
    return Status::InvalidInput(config_name + ": workload.trace_file: '" + w.trace_file() +
                                "' is a folder, not a trace file");
  }
  std::vector<JobSpec> jobs;
  RETURN_IF_ERROR(ReadTrace(w.trace_file(), options, *plan->catalog, &jobs));
  for (const JobSpec& job : jobs) {
    plan->largest_job_gpus = std::max(plan->largest_job_gpus, job.gpus);
    if (job.gpus > plan->capacity.gpus) {
      return Status::InvalidInput(w.trace_file() + ":" + std::to_string(job.source_line) +
                                  ": job " + std::to_string(job.job_id) + " needs " +
                                  std::to_string(job.gpus) + " GPUs; the cluster has " +
                                  std::to_string(plan->capacity.gpus));
    }
  }
  const std::string name = std::filesystem::path(w.trace_file()).filename().string();
  auto in_window = [&jobs](int64_t first, int64_t last) {
    return std::count_if(jobs.begin(), jobs.end(),
                         [&](const JobSpec& j) { return j.job_id >= first && j.job_id <= last; });
  };
  std::string ids = std::to_string(jobs.size()) + " jobs";
  if (!jobs.empty()) {
    const auto [low, high] =
        std::minmax_element(jobs.begin(), jobs.end(),
                            [](const JobSpec& a, const JobSpec& b) { return a.job_id < b.job_id; });
    ids += ", ids " + std::to_string(low->job_id) + ".." + std::to_string(high->job_id);
  }
  RETURN_IF_ERROR(CheckWindow(r, config_name, in_window, "trace " + name + ": " + ids, plan));
  plan->source = std::make_shared<VectorJobSource>(std::move(jobs), "trace " + name);
  return Status::Ok();
}

Status OpenGenerator(const config::RunConfig& cfg, const std::string& config_name, RunPlan* plan) {
  const config::Generator& g = cfg.workload().generator();
  GeneratorOptions options;
  options.jobs_per_hour = g.jobs_per_hour();
  options.num_jobs = g.num_jobs();
  options.image_percent = g.image_percent();
  options.language_percent = g.language_percent();
  options.speech_percent = g.speech_percent();
  options.multi_gpu = g.multi_gpu();
  options.seed = cfg.run().seed();
  if (Status s = ValidateGeneratorOptions(options, *plan->catalog); !s.ok()) {
    return Status::InvalidInput(config_name + ": workload.generator: " + s.message());
  }
  const int32_t largest_job = options.multi_gpu ? 8 : 1;
  plan->largest_job_gpus = largest_job;
  if (largest_job > plan->capacity.gpus) {
    return Status::InvalidInput(config_name + ": workload.generator.multi_gpu: jobs of " +
                                std::to_string(largest_job) + " GPUs; the cluster has " +
                                std::to_string(plan->capacity.gpus));
  }
  // The generator numbers its jobs 0, 1, ..., num_jobs - 1 (endless: every id comes).
  const int64_t n = options.num_jobs;
  auto in_window = [n](int64_t first, int64_t last) {
    return n == 0 ? last - first + 1 : std::max<int64_t>(0, std::min(last, n - 1) - first + 1);
  };
  const std::string jobs = n == 0 ? std::string("an endless generator")
                                  : "workload.generator.num_jobs: " + std::to_string(n) +
                                        " jobs, ids 0.." + std::to_string(n - 1);
  RETURN_IF_ERROR(CheckWindow(cfg.run(), config_name, in_window, jobs, plan));
  plan->source = std::make_shared<SynergyGenerator>(options, *plan->catalog);
  return Status::Ok();
}

void PlanOptions(const config::RunConfig& cfg, const std::string& config_name, RunPlan* plan) {
  const config::Scheduler& s = cfg.scheduler();
  plan->scheduler.policy = PolicyNameOf(s);
  plan->scheduler.mechanism = MechanismNameOf(s);
  plan->scheduler.round_s = s.round_s();
  plan->scheduler.order.starvation_s = s.starvation_s();
  plan->scheduler.order.ftf_order = s.ftf_order() == config::synergy
                                        ? scheduling::FtfOrder::kSmallestFirst
                                        : scheduling::FtfOrder::kLargestFirst;
  plan->scheduler.mechanism_options.tune_sort_by_demand = s.tune_sort_by_demand();
  plan->scheduler.mechanism_options.round_s = s.round_s();
  const config::Run& r = cfg.run();
  plan->scheduler.measure_first_job = r.measure_first_job();
  plan->scheduler.measure_last_job = r.measure_last_job();
  plan->scheduler.deadline_s = r.deadline_s();
  plan->scheduler.lease_log = r.lease_log();
  plan->profile_jobs = s.profiling() != config::oracle;
  scheduling::ProfilingOptions& p = plan->profiler.options;
  p.mode = static_cast<scheduling::ProfilingMode>(static_cast<int>(s.profiling()));
  p.seconds_per_point = s.profiler().seconds_per_point();
  p.noise_stddev = s.profiler().noise_stddev();
  p.improvement_threshold = s.profiler().improvement_threshold();
  plan->profiler.servers = s.profiler().servers();
  plan->profiler.seed = r.seed();
  plan->runtime.emulated = r.mode() == config::emulated;
  plan->runtime.time_scale = r.time_scale();
  plan->runtime.threads = r.threads();
  plan->runtime.middleman = cfg.placement_size() > 0 || cfg.deployment().host_size() > 0;
  plan->out_dir = r.out_dir();
  plan->identity.set_config_name(config_name);
  plan->identity.set_mode(config::Mode_Name(r.mode()));
  plan->identity.set_policy(plan->scheduler.policy);
  plan->identity.set_mechanism(plan->scheduler.mechanism);
  plan->identity.set_seed(r.seed());
}

// faults.recovery as the jobs read it: the failure model (for young_daly) and the cluster's shape.
std::shared_ptr<const RecoveryPlan> PlanRecovery(const config::Faults& faults,
                                                 const RunPlan& plan) {
  auto recovery = std::make_shared<RecoveryPlan>();
  recovery->recovery = faults.recovery();
  recovery->gpus_per_server = 1;
  if (faults.has_failure_model()) recovery->failures = ResolveFailureModel(faults.failure_model());
  for (const ServerSpec& server : plan.servers) {
    recovery->gpus_per_server = std::max(recovery->gpus_per_server, server.gpus);
  }
  if (plan.scheduler.fabric && !plan.servers.empty()) {
    std::map<int32_t, int32_t> servers_of_rack;
    for (const ServerSpec& server : plan.servers) {
      const int32_t rack = plan.scheduler.fabric->topology.RackOf(server.index);
      recovery->servers_per_rack = std::max(recovery->servers_per_rack, ++servers_of_rack[rack]);
    }
  }
  return recovery;
}

// The fault plan against the run's shape: targets must name servers and jobs it has.
Status PlanFaults(const config::RunConfig& cfg, const std::string& config_name, RunPlan* plan) {
  // Servers on `troupe node` processes are always watched, faults block or not: a node killed
  // from outside (kill -9) or hung (SIGSTOP) is found dead by heartbeats within 3 of them, and its
  // servers are lost for good, instead of the run waiting for them forever.
  if (plan->runtime.middleman) {
    plan->runtime.heartbeat_s = cfg.faults().heartbeat_s();
    plan->runtime.peer_timeout_s = 3 * cfg.faults().heartbeat_s();
  }
  if (!cfg.has_faults()) return Status::Ok();
  FaultUniverse universe;
  universe.servers = static_cast<int64_t>(plan->servers.size());
  for (const ServerSpec& server : plan->servers) {
    universe.gpus_of_server.push_back(server.gpus);
    // A failure model's switch failure takes out the rack under it.
    if (plan->scheduler.fabric) {
      universe.rack_of_server.push_back(plan->scheduler.fabric->topology.RackOf(server.index));
    }
  }
  if (auto* trace = dynamic_cast<const VectorJobSource*>(plan->source.get())) {
    universe.jobs = static_cast<int64_t>(trace->size());
    universe.job_ids = trace->SortedIds();
  } else if (cfg.workload().generator().num_jobs() > 0) {
    universe.jobs = cfg.workload().generator().num_jobs();
  }
  plan->jobs_known = universe.jobs;
  plan->job_ids = universe.job_ids;
  Status s = BuildFaultPlan(cfg.faults(), cfg.run().seed(), universe, &plan->faults);
  if (!s.ok()) return Status::InvalidInput(config_name + ": " + s.message());
  RETURN_IF_ERROR(PlanSlowLinks(cfg, config_name, plan->faults.link_stretches, &plan->scheduler));
  for (const FaultEvent& e : plan->faults.events) {
    if (e.target.kind == EndpointKind::kPs) {
      return Status::InvalidInput(config_name + ": fault '" + e.Describe() +
                                  "': ps targets belong to a paramserver run");
    }
    if (e.kind == FaultKind::kCrash && e.target.kind == EndpointKind::kScheduler &&
        e.duration_s <= 0) {
      return Status::InvalidInput(config_name + ": fault '" + e.Describe() +
                                  "': a crashed scheduler must restart (duration_s > 0), or "
                                  "nothing could end the run");
    }
  }
  // A faults block turns the re-asking of missing reports on even with no fault to inject.
  plan->scheduler.report_grace_s = plan->faults.report_grace_s;
  if (cfg.faults().has_recovery()) {
    // A checkpoint's size is the model's gradient: without it every write and read would be free.
    for (const ModelProfile& model : plan->catalog->models()) {
      if (model.gradient_bytes <= 0) {
        return Status::InvalidInput(config_name + ": faults.recovery: model '" + model.name +
                                    "' has no gradient size (the catalogue's gradient_mb "
                                    "column), which a checkpoint's size is taken from");
      }
    }
    const int32_t spares = cfg.faults().recovery().spare_servers();
    if (spares >= static_cast<int32_t>(plan->servers.size())) {
      return Status::InvalidInput(config_name + ": faults.recovery.spare_servers: " +
                                  std::to_string(spares) + " spares leave none of the cluster's " +
                                  std::to_string(plan->servers.size()) + " servers to place jobs");
    }
    plan->scheduler.spare_servers = spares;
    if (cfg.faults().recovery().on_server_loss() == config::continue_smaller) {
      plan->scheduler.continue_smaller_fraction = cfg.faults().recovery().min_size_fraction();
    }
    plan->recovery = PlanRecovery(cfg.faults(), *plan);
    plan->scheduler.recovery = true;
  }
  return Status::Ok();
}

// backends.reference_flops_per_s 0: "cuda" converts at the catalogue's V100; "cpu" at this host's
// measured rate, so that a job advances at about the catalogue's speed instead of a thousand
// times slower. A given value is kept: runs that compare hosts need one fixed reference.
Status ResolveReferenceFlops(const std::string& config_name, gpu::RealComputeOptions* o) {
  double& reference = o->sizing.reference_flops_per_s;
  if (reference > 0) return Status::Ok();
  if (o->compute != "cpu") {
    reference = gpu::kCatalogueGpuFlopsPerS;
    return Status::Ok();
  }
  if (Status s = gpu::MeasureCpuFlopsPerS(o->sizing.width, &reference); !s.ok()) {
    return Status::Internal(config_name + ": backends.reference_flops_per_s: " + s.message());
  }
  spdlog::info("cpu backend: measured {:.1f} GFLOP/s on this host (reference_flops_per_s {:.3g})",
               reference / 1e9, reference);
  return Status::Ok();
}

// RunConfig.backends against this build and machine: ValidateConfig checked the names and the
// mode; here "cuda" and "nccl" need a build with them and a GPU that answers, every model a step
// plan, and the largest job no more devices (ranks) than the backend has.
Status PlanBackends(const config::RunConfig& cfg, const std::string& config_name, RunPlan* plan) {
  const config::Backends& b = cfg.backends();
  gpu::RealComputeOptions& o = plan->compute;
  o.compute = b.compute();
  o.collective = b.collective();
  o.sizing.scale = b.scale();
  o.sizing.width = b.width();
  o.sizing.gemms = b.gemms();
  o.sizing.reference_flops_per_s = b.reference_flops_per_s();
  o.gradient_bytes = b.gradient_mib() * 1024 * 1024;
  o.link.bytes_per_s = b.link_gbps() * 1e9 / 8;
  o.link.latency_s = b.link_latency_us() * 1e-6;
  o.exchange_every_steps = b.exchange_every_steps();
  if (!o.enabled()) return Status::Ok();
  auto fail = [&](const std::string& field, const std::string& why) {
    return Status::InvalidInput(config_name + ": " + field + ": " + why);
  };
#ifndef TROUPE_HAVE_CUDA
  if (o.compute == "cuda") {
    return fail("backends.compute",
                "'cuda' needs a troupe built with CUDA; this build has none (configure with "
                "-DTROUPE_CUDA=ON where nvcc is installed), or use 'cpu'");
  }
#endif
#ifndef TROUPE_HAVE_NCCL
  if (o.collective == "nccl") {
    return fail("backends.collective",
                "'nccl' needs a troupe built with NCCL; this build has none, or use 'cpu' or "
                "'emulated'");
  }
#endif
  std::unique_ptr<gpu::ComputeBackend> compute;
  if (Status s = gpu::MakeComputeBackend(o.compute, &compute); !s.ok()) {
    return fail("backends.compute", "'" + o.compute + "' cannot run here: " + s.message());
  }
  RETURN_IF_ERROR(ResolveReferenceFlops(config_name, &o));
  if (plan->largest_job_gpus > compute->max_devices()) {
    return fail("backends.compute", "'" + o.compute + "' has " +
                                        std::to_string(compute->max_devices()) +
                                        " devices here; the workload has jobs of " +
                                        std::to_string(plan->largest_job_gpus) + " GPUs");
  }
  if (plan->largest_job_gpus > 1) {
    std::unique_ptr<gpu::CollectiveBackend> collective;
    if (Status s = gpu::MakeCollectiveBackend(o.collective, o.link, &collective); !s.ok()) {
      return fail("backends.collective", "'" + o.collective + "' cannot run here: " + s.message());
    }
    if (plan->largest_job_gpus > collective->max_ranks()) {
      return fail("backends.collective", "'" + o.collective + "' has " +
                                             std::to_string(collective->max_ranks()) +
                                             " ranks here; the workload has jobs of " +
                                             std::to_string(plan->largest_job_gpus) + " GPUs");
    }
  }
  for (const ModelProfile& model : plan->catalog->models()) {
    gpu::StepPlan step;
    if (Status s = gpu::PlanStep(model, o.sizing, &step); !s.ok()) {
      return fail("backends", s.message());
    }
  }
  return Status::Ok();
}

}  // namespace

Status PlanRun(const config::RunConfig& cfg, const std::string& config_name, RunPlan* plan) {
  PlanOptions(cfg, config_name, plan);
  RETURN_IF_ERROR(CheckSchedulerNames(cfg.scheduler(), config_name));
  RETURN_IF_ERROR(LoadCatalog(cfg.workload(), config_name, &plan->catalog));
  PlanServers(cfg, plan);
  RETURN_IF_ERROR(PlanGpuTypes(cfg, config_name, *plan->catalog, &plan->scheduler));
  RETURN_IF_ERROR(PlanFabric(cfg, config_name, static_cast<int32_t>(plan->servers.size()),
                             *plan->catalog, &plan->scheduler));
  if (plan->runtime.middleman) {
    RETURN_IF_ERROR(PlanDeployment(cfg, config_name, plan->server_nodes, &plan->runtime));
  }
  RETURN_IF_ERROR(cfg.workload().has_trace_file() && !cfg.workload().trace_file().empty()
                      ? OpenTrace(cfg.workload(), cfg.run(), config_name, plan)
                      : OpenGenerator(cfg, config_name, plan));
  RETURN_IF_ERROR(PlanBackends(cfg, config_name, plan));
  RETURN_IF_ERROR(PlanFaults(cfg, config_name, plan));
  return PlanWithoutStragglers(cfg, config_name, plan);
}

}  // namespace troupe
