#include "runner/oasis/oasis_run.hpp"

#include <caf/send.hpp>
#include <cstdio>
#include <future>

#include "base/status_macros.hpp"
#include "runner/oasis/oasis_experiment.hpp"
#include "runner/run_directory.hpp"
#include "scheduling/oasis/baselines.hpp"

namespace troupe {
namespace {

namespace so = scheduling::oasis;
constexpr uint64_t kHistorySeed = 1000003;

void SetRange(const config::Oasis::Range& from, so::Range* to) {
  if (from.has_lo()) to->lo = from.lo();
  if (from.has_hi()) to->hi = from.hi();
}

void SetMachine(const config::Oasis::Machine& from, so::ResourceVector* to) {
  if (from.has_gpus()) (*to)[0] = from.gpus();
  if (from.has_cpus()) (*to)[1] = from.cpus();
  if (from.has_memory_gb()) (*to)[2] = from.memory_gb();
  if (from.has_storage_gb()) (*to)[3] = from.storage_gb();
  if (from.has_gbps()) (*to)[4] = from.gbps();
}

so::WorkloadSpec Spec(const config::Oasis& o) {
  so::WorkloadSpec s;
  s.slots = o.slots();
  s.slot_s = o.slot_s();
  s.worker_servers = o.worker_servers();
  s.ps_machines = o.ps_machines();
  SetMachine(o.worker_capacity(), &s.worker_capacity);
  SetMachine(o.ps_capacity(), &s.ps_capacity);
  s.jobs = o.jobs();
  s.jobs_per_slot = o.jobs_per_slot();
  s.diurnal_amplitude = o.diurnal_amplitude();
  s.diurnal_period = o.diurnal_period();
  so::JobRanges& r = s.ranges;
  r.utility = o.utility() == "linear" ? so::UtilityKind::kLinear
              : o.utility() == "step" ? so::UtilityKind::kStep
                                      : so::UtilityKind::kSigmoid;
  SetRange(o.g1(), &r.g1);
  SetRange(o.g2(), &r.g2);
  SetRange(o.g3(), &r.g3);
  SetRange(o.epochs(), &r.epochs);
  SetRange(o.chunks(), &r.chunks);
  SetRange(o.minibatches(), &r.minibatches);
  SetRange(o.minibatch_s(), &r.minibatch_s);
  SetRange(o.gradient_gb(), &r.gradient);
  SetRange(o.worker_gpus(), &r.worker_gpu);
  SetRange(o.worker_cpus(), &r.worker_cpu);
  SetRange(o.worker_memory_gb(), &r.worker_memory);
  SetRange(o.worker_storage_gb(), &r.worker_storage);
  SetRange(o.worker_gbps(), &r.worker_bandwidth);
  SetRange(o.ps_cpus(), &r.ps_cpu);
  SetRange(o.ps_memory_gb(), &r.ps_memory);
  SetRange(o.ps_storage_gb(), &r.ps_storage);
  SetRange(o.ps_gbps(), &r.ps_bandwidth);
  return s;
}

void Summarise(const OasisPlan& plan, OasisRunResult* result) {
  summaries::OasisRunSummary& s = result->summary;
  s.set_config(plan.config_name);
  s.set_mode(plan.mode);
  s.set_policy(plan.policy);
  s.set_seed(plan.seed);
  s.set_slots(plan.cluster.slots);
  s.set_worker_servers(static_cast<int32_t>(plan.cluster.workers.size()));
  s.set_ps_machines(static_cast<int32_t>(plan.cluster.ps.size()));
  s.set_low_factor(plan.low_factor);
  s.set_ps_link_slowdown(plan.links.ps_slowdown);
  s.set_link_delay_s(plan.links.delay_s);
  s.set_simulator_utility(-1);  // without interference the run equals the simulator
  s.set_simulator_finished(-1);
  const OasisRecords& r = result->records;
  s.set_jobs(static_cast<int32_t>(r.jobs.size()));
  int32_t admitted = 0, rejected = 0, finished = 0, late = 0, behind = 0;
  int64_t pieces = 0;
  double total_utility = 0, lost_utility = 0, mean_gpu_use = 0;
  for (const OasisJobRow& j : r.jobs) {
    admitted += j.admitted;
    rejected += !j.admitted;
    finished += j.end_slot >= 0;
    late += j.admitted && j.planned_end >= 0 && (j.end_slot < 0 || j.end_slot > j.planned_end);
    total_utility += j.utility;
    pieces += j.pieces;
    behind += j.behind;
    if (j.behind) lost_utility += j.model_utility - j.utility;
  }
  for (const OasisSlotRow& row : r.slots) mean_gpu_use += row.worker_use[0] / r.slots.size();
  s.set_admitted(admitted);
  s.set_rejected(rejected);
  s.set_finished(finished);
  s.set_late(late);
  s.set_total_utility(total_utility);
  s.set_chunk_pieces(static_cast<double>(pieces));
  s.set_behind(behind);
  s.set_lost_utility(lost_utility);
  s.set_mean_gpu_use(mean_gpu_use);
  s.set_released_worker_slots(r.released_worker_slots);
  s.mutable_violations()->Assign(r.violations.begin(), r.violations.end());
}

// What the run holds must fit memory and its ints: a usage entry per machine and slot, the jobs,
// and the worker-slots of the longest job the ranges allow (counted in an int).
Status CheckScale(const so::WorkloadSpec& s, const std::string& name) {
  constexpr double kMaxMachineSlots = 2e6, kMaxJobs = 1e6, kMaxJobWorkerSlots = 1e9;
  const double machine_slots = static_cast<double>(s.slots) * (s.worker_servers + s.ps_machines);
  if (machine_slots > kMaxMachineSlots) {
    return Status::InvalidInput(name + ": oasis.slots: slots x (worker_servers + ps_machines) " +
                                "must be <= 2e6, got " +
                                std::to_string(static_cast<int64_t>(machine_slots)));
  }
  const double jobs = s.jobs > 0 ? s.jobs : s.jobs_per_slot * (1 + s.diurnal_amplitude) * s.slots;
  if (jobs > kMaxJobs) {
    return Status::InvalidInput(name + ": oasis.jobs_per_slot: jobs_per_slot x (1 + " +
                                "diurnal_amplitude) x slots must be <= 1e6 jobs, got " +
                                std::to_string(static_cast<int64_t>(jobs)));
  }
  const so::JobRanges& r = s.ranges;
  const double step_s = r.minibatch_s.hi + 2 * r.gradient.hi / r.worker_bandwidth.lo;
  const double longest = r.epochs.hi * r.chunks.hi * r.minibatches.hi * step_s / s.slot_s;
  if (!(longest <= kMaxJobWorkerSlots)) {
    return Status::InvalidInput(
        name + ": oasis.slot_s: the longest job the ranges allow (epochs.hi x chunks.hi x " +
        "minibatches.hi x (minibatch_s.hi + 2 gradient_gb.hi / worker_gbps.lo) / slot_s) must " +
        "take <= 1e9 worker-slots");
  }
  return Status::Ok();
}

// The fabric over the run's machines: worker servers first, then the PS machines.
Status PlanOasisFabric(const config::RunConfig& cfg, const std::string& name, OasisPlan* plan) {
  if (!cfg.has_fabric()) return Status::Ok();
  if (plan->links.ps_slowdown != 1) {
    return Status::InvalidInput(name +
                                ": oasis.ps_link_slowdown: must be 1 with a fabric (its "
                                "links carry the transfers; slow them in the fabric block)");
  }
  const auto machines =
      static_cast<int32_t>(plan->cluster.workers.size() + plan->cluster.ps.size());
  StatusOr<fabric::Topology> topology = fabric::Topology::Build(cfg.fabric(), machines);
  if (!topology.ok()) return Status::InvalidInput(name + ": " + topology.status().message());
  plan->links.fabric = std::make_shared<const fabric::Topology>(std::move(topology).value());
  return Status::Ok();
}

std::shared_ptr<so::OnlinePolicy> NewPolicy(const OasisPlan& plan) {
  if (plan.policy == "dorm") return std::make_shared<so::DormPolicy>(plan.cluster, plan.dorm);
  return so::MakePolicy(plan.policy, plan.cluster, plan.prices);
}

}  // namespace

Status PlanOasisRun(const config::RunConfig& cfg, const std::string& config_name, OasisPlan* plan) {
  const config::Oasis& o = cfg.oasis();
  plan->config_name = config_name;
  plan->spec = Spec(o);
  RETURN_IF_ERROR(CheckScale(plan->spec, config_name));
  plan->seed = cfg.run().seed();
  plan->cluster = so::MakeCluster(plan->spec);
  plan->jobs = so::MakeJobs(plan->spec, plan->seed);
  plan->policy = o.policy();
  plan->low_factor = o.low_scale();
  plan->prices =
      so::EstimatePrices(plan->cluster, so::MakeJobs(plan->spec, plan->seed + kHistorySeed))
          .Scaled(plan->low_factor, o.high_scale());
  plan->dorm.fairness = o.dorm_fairness();
  plan->dorm.node_limit = o.dorm_node_limit();
  plan->links.ps_slowdown = o.ps_link_slowdown();
  plan->links.delay_s = o.link_delay_s();
  RETURN_IF_ERROR(PlanOasisFabric(cfg, config_name, plan));
  const config::Run& r = cfg.run();
  plan->runtime.emulated = r.mode() == config::emulated;
  plan->runtime.time_scale = r.time_scale();
  plan->runtime.threads = r.threads();
  plan->mode = config::Mode_Name(r.mode());
  plan->out_dir = r.out_dir();
  return Status::Ok();
}

Status ExecuteOasisRun(OasisPlan plan, const ExecuteOptions& options, OasisRunResult* result) {
  // Refused before anything runs: troupe never replaces a folder it did not write.
  if (!plan.out_dir.empty()) {
    RETURN_IF_ERROR(CheckRunDirectory(plan.out_dir));
  }
  std::shared_ptr<so::OnlinePolicy> policy = NewPolicy(plan);
  if (!policy)
    return Status::InvalidInput(plan.config_name + ": oasis.policy: unknown " + plan.policy);
  ActorRuntime runtime(plan.runtime);
  auto handover = std::make_shared<std::promise<OasisRecords>>();
  std::future<OasisRecords> future = handover->get_future();
  caf::actor scheduler =
      runtime.system().spawn(OasisSchedulerActor, plan.cluster, plan.jobs, policy,
                             std::move(handover), plan.links, runtime.clock(), runtime.telemetry());
  const bool done = runtime.Drive([&] {
    if (options.on_progress) options.on_progress(*runtime.telemetry());
  });
  if (!done) {
    caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
    return Status::Internal("the oasis run stalled at virtual time " +
                            std::to_string(runtime.telemetry()->virtual_s.load()) + " s");
  }
  result->records = future.get();
  result->summary.set_wall_s(runtime.WallSeconds());
  result->summary.set_messages(static_cast<double>(runtime.telemetry()->messages.load()));
  result->summary.set_events(static_cast<double>(runtime.telemetry()->timed_events.load()));
  Summarise(plan, result);
  if (plan.links.ps_slowdown != 1 || plan.links.delay_s != 0 || plan.links.fabric) {
    // Interference on: the slot simulator's outcome for the same policy and jobs, beside it.
    const so::SimResult sim = so::Simulate(plan.cluster, plan.jobs, *NewPolicy(plan));
    result->summary.set_simulator_utility(sim.total_utility);
    result->summary.set_simulator_finished(sim.finished);
  }
  if (plan.out_dir.empty()) return Status::Ok();
  return WriteOasisRunDirectory(plan.out_dir, *result);
}

}  // namespace troupe
