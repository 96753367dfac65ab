// ValidateConfig (config_loader.hpp): every number within the range config.proto declares
// (config_ranges.hpp), then the rules a range cannot say (fields compared with each other, totals,
// "> 0" where the range starts at 0, names), one Validate* function per block, each adding
// "field.path: <why>" failures to a Check.
#include "config/config_validation.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <concepts>
#include <limits>
#include <set>
#include <string>
#include <utility>

#include "base/parse.hpp"
#include "base/quoted.hpp"
#include "base/status_macros.hpp"
#include "config/config_ranges.hpp"
#include "config/scheduler_names.hpp"
#include "faults/fault_plan.hpp"
#include "faults/straggler_model.hpp"
#include "scheduling/mechanism_registry.hpp"

namespace troupe {
namespace {

constexpr int64_t kMaxServers = 10000;
constexpr int64_t kMaxGpus = 100000;
// Examples one parameter-server run holds in flight: nodes x batch_size x (prefetch + 1).
constexpr int64_t kMaxPsExamplesInFlight = 1 << 22;
// The synthetic training examples a parameter-server run generates up front (264 bytes each):
// batches x nodes x batch_size, about 1 GiB at most.
constexpr int64_t kMaxPsTrainingExamples = 1 << 22;

std::string Num(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

template <std::integral T>
std::string Num(T value) {
  return std::to_string(value);
}

// Runs every rule but keeps only the first failure: a Status holds one line.
class Check {
 public:
  explicit Check(const std::string& name) : name_(name) {}

  void Fail(const std::string& field, const std::string& why) {
    if (status_.ok()) status_ = Status::InvalidInput(name_ + ": " + field + ": " + why);
  }
  void AtLeast(const std::string& field, int64_t value, int64_t min) {
    if (value < min) Fail(field, "must be >= " + Num(min) + ", got " + Num(value));
  }
  // Written as !(value > 0) so that NaN fails too; infinity is no usable size or rate either.
  void Positive(const std::string& field, double value) {
    if (!std::isfinite(value) || !(value > 0)) Fail(field, "must be > 0, got " + Num(value));
  }
  const Status& status() const { return status_; }

 private:
  const std::string& name_;
  Status status_;
};

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

// "host:port" with a non-empty host and a port in 1..65535.
bool ValidNode(const std::string& node) {
  std::string host;
  uint16_t port = 0;
  return SplitHostPort(node, 1, &host, &port);
}

// A range of servers on a node: a `placement` or a deployment host of role "worker".
struct PlacedRange {
  std::string at;  // the field, for messages
  std::string node;
  bool has_range = false;
  int32_t first = 0;
  int32_t last = 0;
};

std::vector<PlacedRange> PlacedRanges(const config::RunConfig& cfg) {
  std::vector<PlacedRange> ranges;
  for (int i = 0; i < cfg.placement_size(); ++i) {
    const config::Placement& p = cfg.placement(i);
    ranges.push_back({"placement[" + std::to_string(i) + "]", p.node(),
                      p.has_first_server() && p.has_last_server(), p.first_server(),
                      p.last_server()});
  }
  for (int i = 0; i < cfg.deployment().host_size(); ++i) {
    const config::Host& h = cfg.deployment().host(i);
    ranges.push_back({"deployment.host[" + std::to_string(i) + "]", h.address(),
                      h.has_first_server() && h.has_last_server(), h.first_server(),
                      h.last_server()});
  }
  return ranges;
}

// Deployment hosts: named once each, a known role, devices enough for their servers' GPUs.
void ValidateHosts(const config::RunConfig& cfg, Check& check) {
  std::vector<int32_t> server_gpus;
  for (const auto& g : cfg.cluster().servers())
    server_gpus.insert(server_gpus.end(), g.count(), g.gpus());
  std::set<std::string> names;
  for (int i = 0; i < cfg.deployment().host_size(); ++i) {
    const config::Host& h = cfg.deployment().host(i);
    const std::string at = "deployment.host[" + std::to_string(i) + "]";
    if (h.name().empty() || !names.insert(h.name()).second) {
      check.Fail(at + ".name",
                 "every host needs a name of its own, got \"" + Excerpt(h.name()) + "\"");
    }
    if (h.role() != "worker") {
      check.Fail(at + ".role",
                 "must be \"worker\" (\"ps\" hosts belong to a paramserver run), got \"" +
                     Excerpt(h.role()) + "\"");
    }
    std::set<int32_t> devices(h.devices().begin(), h.devices().end());
    if (devices.size() != static_cast<size_t>(h.devices_size()) ||
        (!devices.empty() && *devices.begin() < 0)) {
      check.Fail(at + ".devices", "must be distinct non-negative GPU ids");
    }
    int64_t gpus = 0;
    for (int32_t s = h.first_server(); s <= h.last_server(); ++s) {
      if (s >= 0 && static_cast<size_t>(s) < server_gpus.size()) gpus += server_gpus[s];
    }
    if (h.devices_size() > 0 && h.devices_size() < gpus) {
      check.Fail(at + ".devices", "lists " + Num(h.devices_size()) + " devices for servers " +
                                      Num(h.first_server()) + ".." + Num(h.last_server()) + " of " +
                                      Num(gpus) + " GPUs");
    }
  }
}

void ValidatePlacement(const config::RunConfig& cfg, Check& check) {
  const std::vector<PlacedRange> ranges = PlacedRanges(cfg);
  if (ranges.empty()) return;
  if (cfg.run().mode() != config::real) {
    check.Fail(cfg.placement_size() > 0 ? "placement" : "deployment.host",
               "needs run.mode: real (servers live on other nodes)");
  }
  int64_t servers = 0;
  for (const auto& g : cfg.cluster().servers()) servers += g.count();
  std::vector<size_t> order;  // ranges by first server, to find overlaps
  for (size_t i = 0; i < ranges.size(); ++i) {
    const PlacedRange& p = ranges[i];
    const bool host = p.at.starts_with("deployment");
    if (!ValidNode(p.node)) {
      check.Fail(p.at + (host ? ".address" : ".node"),
                 "must be \"host:port\" with a port in 1..65535, got \"" + Excerpt(p.node) + "\"");
    }
    if (!p.has_range) {
      check.Fail(p.at, "needs both first_server and last_server");
    } else if (p.first < 0 || p.first > p.last || p.last >= servers) {
      check.Fail(p.at, "servers " + Num(p.first) + ".." + Num(p.last) +
                           " are not a range inside the cluster's " + Num(servers) +
                           " servers (0.." + Num(servers - 1) + ")");
    }
    order.push_back(i);
  }
  if (!check.status().ok()) return;  // overlaps mean nothing among malformed ranges
  ValidateHosts(cfg, check);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ranges[a].first < ranges[b].first; });
  for (size_t k = 1; k < order.size(); ++k) {
    const PlacedRange& prev = ranges[order[k - 1]];
    const PlacedRange& next = ranges[order[k]];
    if (next.first <= prev.last) {
      check.Fail(next.at, "servers " + Num(next.first) + ".." + Num(next.last) + " overlap " +
                              prev.at + " (" + Num(prev.first) + ".." + Num(prev.last) + ")");
    }
  }
}

// A fault on node:HOST:PORT needs that `troupe node` among the run's: an emulated run has none, and
// a fault nothing would fire is refused rather than silently ignored.
void ValidateNodeFaults(const config::RunConfig& cfg, Check& check) {
  std::set<std::string> nodes;
  for (const PlacedRange& p : PlacedRanges(cfg)) nodes.insert(p.node);
  for (int i = 0; i < cfg.faults().fault_size(); ++i) {
    const config::Fault& f = cfg.faults().fault(i);
    const std::pair<const char*, const std::string*> sides[] = {{"target", &f.target()},
                                                                {"peer", &f.peer()}};
    for (const auto& [field, text] : sides) {
      ActorSet set;
      if (!ParseActorSet(*text, &set).ok() || set.kind != EndpointKind::kNode ||
          nodes.contains(set.node)) {
        continue;
      }
      check.Fail("faults.fault[" + Num(i) + "]." + field,
                 "node:" + set.node +
                     " is no `troupe node` of this run (placement[].node, "
                     "deployment.host[].address)" +
                     (nodes.empty() ? ": the run places no servers on nodes" : ""));
    }
  }
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
  ValidatePlacement(cfg, check);
  ValidateNodeFaults(cfg, check);
  ValidateAgents(cfg, check);
  ValidateExternalScheduler(cfg, check);
  ValidateBackends(cfg, check);
  return check.status();
}

}  // namespace troupe
