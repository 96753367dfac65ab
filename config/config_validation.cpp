// ValidateConfig (config_loader.hpp): every number within the range config.proto declares
// (config_ranges.hpp), then the rules a range cannot say (fields compared with each other, totals,
// "> 0" where the range starts at 0, names), one Validate* function per block, each adding
// "field.path: <why>" failures to a Check.
#include "config/config_validation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "base/parse.hpp"
#include "base/quoted.hpp"
#include "base/status_macros.hpp"
#include "config/config_check.hpp"
#include "config/config_ranges.hpp"
#include "config/scheduler_names.hpp"
#include "faults/fault_plan.hpp"
#include "faults/straggler_model.hpp"
#include "scheduling/mechanism_registry.hpp"

namespace troupe {
namespace {

using validation::Check;
using validation::Num;

constexpr int64_t kMaxServers = 10000;
constexpr int64_t kMaxGpus = 100000;
// Examples one parameter-server run holds in flight: nodes x batch_size x (prefetch + 1).
constexpr int64_t kMaxPsExamplesInFlight = 1 << 22;
// The synthetic training examples a parameter-server run generates up front (264 bytes each):
// batches x nodes x batch_size, about 1 GiB at most.
constexpr int64_t kMaxPsTrainingExamples = 1 << 22;

void ValidateServers(const config::Cluster& cluster, Check& check) {
  if (cluster.servers_size() == 0) {
    check.Fail("cluster.servers", "at least one server group is needed");
  }
  for (int i = 0; i < cluster.servers_size(); ++i) {
    const config::ServerGroup& g = cluster.servers(i);
    std::string at = "cluster.servers[" + std::to_string(i) + "].";
    check.Positive(at + "cpus", g.cpus());
    check.Positive(at + "memory_gb", g.memory_gb());
  }
  // Each group is within its range; the whole cluster must also fit a run's memory (one actor per
  // server, per-GPU state in the scheduler).
  int64_t servers = 0, gpus = 0;
  for (const config::ServerGroup& g : cluster.servers()) {
    servers += g.count();
    gpus += int64_t{g.count()} * g.gpus();
  }
  if (servers > kMaxServers) {
    check.Fail("cluster.servers",
               "at most " + Num(kMaxServers) + " servers in all, got " + Num(servers));
  }
  if (gpus > kMaxGpus) {
    check.Fail("cluster.servers", "at most " + Num(kMaxGpus) + " GPUs in all, got " + Num(gpus));
  }
}

void ValidateWorkload(const config::RunConfig& cfg, Check& check) {
  const config::Workload& w = cfg.workload();
  const config::Generator& g = w.generator();
  double sum = g.image_percent() + g.language_percent() + g.speech_percent();
  if (!(sum > 0))
    check.Fail("workload.generator", "class percents must sum to > 0, got " + Num(sum));
  // An endless generator only stops when the measured jobs are done or the deadline passes.
  bool uses_generator = w.trace_file().empty();
  bool has_window = cfg.run().measure_last_job() >= 0;
  if (uses_generator && g.num_jobs() == 0 && !has_window && cfg.run().deadline_s() == 0) {
    check.Fail("workload.generator.num_jobs",
               "is 0 (endless) but neither run.measure_last_job nor run.deadline_s is set, so the "
               "run would never end");
  }
  if (uses_generator && w.replay_job_failures()) {
    check.Fail("workload.replay_job_failures",
               "the generator records no job failures; replay a trace that does (helios, acme, "
               "alibaba_pai, philly_job_log)");
  }
}

void ValidateRun(const config::RunConfig& cfg, Check& check) {
  const config::Run& r = cfg.run();
  if (r.measure_first_job() >= 0 && r.measure_last_job() >= 0 &&
      r.measure_first_job() > r.measure_last_job()) {
    check.Fail("run.measure_first_job", "must be <= run.measure_last_job (" +
                                            Num(r.measure_last_job()) + "), got " +
                                            Num(r.measure_first_job()));
  }
  if (r.out_dir().empty()) check.Fail("run.out_dir", "must not be empty");
}

// A parameter-server run (RunConfig.paramserver): its own fields instead of cluster/workload.
void ValidateParamServer(const config::RunConfig& cfg, Check& check) {
  const config::ParamServer& p = cfg.paramserver();
  const std::string at = "paramserver.";
  const int64_t hbm_row = 8 + 8 * int64_t{std::max(p.dim(), 1)};  // key + weights + Adagrad
  check.AtLeast(at + "hbm_bytes_per_gpu", p.hbm_bytes_per_gpu(), hbm_row);
  check.Positive(at + "lr_dense", p.lr_dense());
  check.Positive(at + "lr_embedding", p.lr_embedding());
  check.Positive(at + "zipf_skew", p.zipf_skew());
  const int64_t examples = p.batches() * p.nodes() * p.batch_size();
  if (p.criteo_file().empty() && examples > kMaxPsTrainingExamples) {
    check.Fail(at + "batches", "batches x nodes x batch_size (the generated examples) must be <= " +
                                   Num(kMaxPsTrainingExamples) + ", got " + Num(examples));
  }
  const int64_t in_flight = int64_t{p.nodes()} * p.batch_size() * (int64_t{p.prefetch()} + 1);
  if (in_flight > kMaxPsExamplesInFlight) {
    check.Fail(at + "batch_size", "nodes x batch_size x (prefetch + 1) must be <= " +
                                      Num(kMaxPsExamplesInFlight) + ", got " + Num(in_flight));
  }
  if (p.hbm_backend() != "cpu" && p.hbm_backend() != "cuda") {
    check.Fail(at + "hbm_backend",
               "must be \"cpu\" or \"cuda\", got \"" + Excerpt(p.hbm_backend()) + "\"");
  }
  if (cfg.run().out_dir().empty()) check.Fail("run.out_dir", "must not be empty");
  if (cfg.placement_size() > 0) check.Fail("placement", "a paramserver run has no placement");
}

void ValidateOasisRange(const std::string& field, const config::Oasis::Range& r, double min,
                        Check& check) {
  if (!std::isfinite(r.lo()) || !std::isfinite(r.hi()) || r.lo() < min || r.hi() < r.lo()) {
    check.Fail(field, "must have " + Num(min) + " <= lo <= hi, got [" + Num(r.lo()) + ", " +
                          Num(r.hi()) + "]");
  }
}

// The OASiS run (RunConfig.oasis, docs/oasis.md): counts and times positive, ranges ordered,
// names known.
void ValidateOasis(const config::RunConfig& cfg, Check& check) {
  const config::Oasis& o = cfg.oasis();
  const std::string at = "oasis.";
  const std::string& p = o.policy();
  if (p != "oasis" && p != "fifo" && p != "drf" && p != "rrh" && p != "dorm") {
    check.Fail(at + "policy", "must be oasis, fifo, drf, rrh or dorm, got " + p);
  }
  const std::string& u = o.utility();
  if (u != "sigmoid" && u != "linear" && u != "step") {
    check.Fail(at + "utility", "must be sigmoid, linear or step, got " + u);
  }
  const config::Oasis::Range* counts[] = {&o.epochs(), &o.chunks(), &o.minibatches()};
  for (const auto* r : counts) {
    if (r->has_lo() || r->has_hi())
      ValidateOasisRange(at + "epochs/chunks/minibatches", *r, 1, check);
  }
  const config::Oasis::Range* others[] = {&o.g1(),
                                          &o.g2(),
                                          &o.g3(),
                                          &o.minibatch_s(),
                                          &o.gradient_gb(),
                                          &o.worker_gpus(),
                                          &o.worker_cpus(),
                                          &o.worker_memory_gb(),
                                          &o.worker_storage_gb(),
                                          &o.worker_gbps(),
                                          &o.ps_cpus(),
                                          &o.ps_memory_gb(),
                                          &o.ps_storage_gb(),
                                          &o.ps_gbps()};
  for (const auto* r : others) {
    if (r->has_lo() || r->has_hi()) ValidateOasisRange(at + "range", *r, 0, check);
  }
  if (cfg.run().out_dir().empty()) check.Fail("run.out_dir", "must not be empty");
  if (cfg.placement_size() > 0) check.Fail("placement", "an oasis run has no placement");
}

// The agent gateway (docs/agent.md): real mode, a secret, sane limits and timeouts.
void ValidateAgents(const config::RunConfig& cfg, Check& check) {
  if (!cfg.has_agents()) return;
  const config::AgentGateway& a = cfg.agents();
  if (cfg.run().mode() != config::real) {
    check.Fail("agents", "agents train on the wall clock: set run.mode to real");
  }
  const size_t colon = a.listen().rfind(':');
  if (colon == std::string::npos || colon == 0) {
    check.Fail("agents.listen", "must be HOST:PORT, got " + Quoted(a.listen()));
  }
  if (a.secret().empty() && a.secret_file().empty()) {
    check.Fail("agents.secret", "a shared secret (agents.secret or agents.secret_file) is needed");
  }
  if (!a.secret().empty() && !a.secret_file().empty()) {
    check.Fail("agents.secret_file", "give agents.secret or agents.secret_file, not both");
  }
  if (a.heartbeat_s() >= a.read_timeout_s()) {
    check.Fail("agents.heartbeat_s", "must be shorter than agents.read_timeout_s (" +
                                         Num(a.read_timeout_s()) + "), got " +
                                         Num(a.heartbeat_s()));
  }
}

// The external scheduler (docs/external-scheduler.md): selected and configured together, an
// address to listen on, a secret, and a registered built-in fallback.
void ValidateExternalScheduler(const config::RunConfig& cfg, Check& check) {
  const bool selected = MechanismNameOf(cfg.scheduler()) == "external";
  if (!cfg.has_external_scheduler()) {
    if (selected) {
      check.Fail("scheduler.mechanism_name",
                 "'external' needs an external_scheduler block (docs/external-scheduler.md)");
    }
    return;
  }
  const config::ExternalScheduler& e = cfg.external_scheduler();
  if (!selected) {
    check.Fail("external_scheduler", "set, but scheduler.mechanism_name is not 'external'");
  }
  std::string host;
  uint16_t port = 0;
  if (!SplitHostPort(e.listen(), 0, &host, &port)) {
    check.Fail("external_scheduler.listen", "must be HOST:PORT, got " + Quoted(e.listen()));
  }
  if (e.secret().empty() == e.secret_file().empty()) {
    check.Fail("external_scheduler.secret",
               "give external_scheduler.secret or external_scheduler.secret_file (one of them)");
  }
  if (e.fallback() == "external") {
    check.Fail("external_scheduler.fallback",
               "must be a mechanism troupe runs itself, not external");
  } else if (scheduling::FindMechanism(e.fallback()) == nullptr) {
    check.Fail("external_scheduler.fallback", Quoted(e.fallback()) +
                                                  " is not a registered mechanism (known: " +
                                                  scheduling::RegisteredMechanismNames() + ")");
  }
}

// The real-mode backends (RunConfig.backends, docs/gpu.md): known names, real mode for real
// compute, a positive step sizing. Whether this build and machine can run "cuda" or "nccl" is
// checked by PlanRun (runner/cluster/run_setup.cpp), which links the GPU backends.
void ValidateBackends(const config::RunConfig& cfg, Check& check) {
  if (!cfg.has_backends()) return;
  const config::Backends& b = cfg.backends();
  const std::string& compute = b.compute();
  const std::string& collective = b.collective();
  if (compute != "emulated" && compute != "cpu" && compute != "cuda") {
    check.Fail("backends.compute", "must be emulated, cpu or cuda, got " + Quoted(compute));
  }
  if (collective != "emulated" && collective != "cpu" && collective != "nccl") {
    check.Fail("backends.collective", "must be emulated, cpu or nccl, got " + Quoted(collective));
  }
  if (compute != "emulated" && cfg.run().mode() != config::real) {
    check.Fail("backends.compute",
               Quoted(compute) + " runs real steps on the wall clock: set run.mode to real");
  }
  if (collective != "emulated" && compute == "emulated") {
    check.Fail("backends.collective",
               Quoted(collective) + " all-reduces real steps: set backends.compute to cpu or cuda");
  }
  if (collective == "nccl" && compute == "cpu") {
    check.Fail("backends.collective", "'nccl' needs backends.compute: cuda");
  }
  check.Positive("backends.scale", b.scale());
  if (b.reference_flops_per_s() > 0 && b.reference_flops_per_s() < 1e6) {
    check.Fail("backends.reference_flops_per_s",
               "must be 0 (measure or the V100's) or at least 1e6, got " +
                   std::to_string(b.reference_flops_per_s()));
  }
}

}  // namespace

Status ValidateConfig(const config::RunConfig& cfg, const std::string& name) {
  RETURN_IF_ERROR(CheckFieldRanges(cfg, name));
  if (cfg.has_faults()) {
    if (cfg.has_oasis()) return Status::InvalidInput(name + ": faults: OASiS runs take no faults");
    RETURN_IF_ERROR(CheckFaults(cfg.faults(), name + ": faults"));
    // Checkpoint cadences and restart costs are the emulated cluster jobs' (docs/faults.md,
    // "Recovery"): refused where nothing would apply them.
    if (cfg.faults().has_recovery() &&
        (cfg.has_paramserver() || cfg.has_agents() || cfg.run().mode() == config::real)) {
      return Status::InvalidInput(name + ": faults.recovery: only emulated cluster jobs " +
                                  "checkpoint by it (not parameter-server runs, agent jobs or "
                                  "real runs)");
    }
    RETURN_IF_ERROR(CheckStragglerRun(cfg, name));
  }
  if (cfg.workload().replay_job_failures() && (cfg.has_paramserver() || cfg.has_oasis())) {
    return Status::InvalidInput(name + ": workload.replay_job_failures: only cluster runs replay " +
                                "a trace's job failures (not parameter-server or OASiS runs)");
  }
  Check check(name);
  if (cfg.has_paramserver()) {
    ValidateParamServer(cfg, check);
    return check.status();
  }
  if (cfg.has_oasis()) {
    ValidateOasis(cfg, check);
    return check.status();
  }
  RETURN_IF_ERROR(CheckSchedulerNames(cfg.scheduler(), name));
  ValidateServers(cfg.cluster(), check);
  ValidateRun(cfg, check);
  ValidateWorkload(cfg, check);
  validation::ValidatePlacement(cfg, check);
  validation::ValidateNodeFaults(cfg, check);
  ValidateAgents(cfg, check);
  ValidateExternalScheduler(cfg, check);
  ValidateBackends(cfg, check);
  return check.status();
}

}  // namespace troupe
