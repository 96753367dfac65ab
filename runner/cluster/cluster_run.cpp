#include "runner/cluster/cluster_run.hpp"

#include <algorithm>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <cstdio>
#include <future>
#include <map>

#include "actors/agent/agent_service.hpp"
#include "actors/checkpoint_store_actor.hpp"
#include "actors/fabric_actor.hpp"
#include "actors/fault_injector_actor.hpp"
#include "actors/metrics_actor.hpp"
#include "actors/profiler_actor.hpp"
#include "actors/server_actor.hpp"
#include "actors/workload_actor.hpp"
#include "base/huge_pages.hpp"
#include "base/status_macros.hpp"
#include "messages/atoms.hpp"
#include "runner/cluster/external_session.hpp"
#include "runner/cluster/failure_records.hpp"
#include "runner/cluster/node_counters.hpp"
#include "runner/cluster/report_writer.hpp"
#include "runner/cluster/straggler_what_if.hpp"
#include "runner/run_directory.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/fault_network.hpp"
#include "runtime/live_feed.hpp"
#include "runtime/remote_node.hpp"

namespace troupe {
namespace {

constexpr auto kNodeTimeout = std::chrono::seconds(10);
// From this many GPUs on, a run's heap is backed by huge pages (base/huge_pages.hpp): 4,096 GPUs
// keep a few thousand jobs running, whose entries outgrow what 4 KiB pages map at once.
constexpr int64_t kHugePagesFromGpus = 4096;

// Stands for the run on the nodes that host its servers: a node stops the servers it spawned for
// the run, and lends their devices again, once this actor is down (actors/node_actor.hpp). It
// exits with ExecuteRun; a run whose process dies or whose connection is lost is down all the
// same.
caf::behavior RunHandleActor(caf::event_based_actor*) {
  return {[](caf::ok_atom) {}};
}

// The run's handle, made with its first remote server; it exits when ExecuteRun returns.
struct RunHandle {
  caf::actor actor;
  ~RunHandle() {
    if (actor) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  }
};

Status SpawnRemoteServer(ActorRuntime& runtime, const caf::actor& node, const ServerSpec& spec,
                         const std::string& address, const caf::actor& run, server_actor* server) {
  caf::actor_system& sys = runtime.system();
  caf::scoped_actor self{sys};
  Status status = Status::Ok();
  // A node answers with an actor handle (actors/node_actor.cpp): its server's.
  AskWithin(self.ptr(), runtime.telemetry(), node, kNodeTimeout, spawn_server_atom::value, spec,
            run)
      .receive([&](caf::actor& spawned) { *server = caf::actor_cast<server_actor>(spawned); },
               [&](caf::error& e) {
                 status = Status::IoError("node " + address + ": cannot spawn server " + spec.name +
                                          ": " + sys.render(e));
               });
  return status;
}

Status SpawnServers(ActorRuntime& runtime, const RunPlan& plan, std::vector<server_actor>* out,
                    std::map<std::string, caf::actor>& nodes, RunHandle* run) {
  for (size_t i = 0; i < plan.servers.size(); ++i) {
    const std::string& address = plan.server_nodes[i];
    if (address.empty()) {
      out->push_back(runtime.system().spawn(ServerActor, plan.servers[i], runtime.telemetry()));
      continue;
    }
    if (!nodes.count(address)) {
      RETURN_IF_ERROR(ConnectNode(runtime.system(), address, &nodes[address]));
    }
    if (!run->actor) run->actor = runtime.system().spawn(RunHandleActor);
    server_actor server;
    RETURN_IF_ERROR(
        SpawnRemoteServer(runtime, nodes[address], plan.servers[i], address, run->actor, &server));
    out->push_back(std::move(server));
  }
  return Status::Ok();
}

// Real compute on a fabric: the actor that paces the gangs' exchanges across servers
// (actors/fabric_actor.hpp). It exits with ExecuteRun.
struct FabricHandle {
  caf::actor actor;
  ~FabricHandle() {
    if (actor) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  }
};

// With --serve: the feed the actors add to, made before any of them exists.
std::unique_ptr<LiveFeed> MakeLiveFeed(const RunPlan& plan) {
  std::vector<LiveServer> servers;
  for (const ServerSpec& spec : plan.servers) {
    servers.push_back(LiveServer{spec.name, spec.gpus, spec.cpus, spec.memory_gb});
  }
  auto feed =
      std::make_unique<LiveFeed>("cluster", plan.identity.config_name(), std::move(servers));
  if (plan.scheduler.fabric) {  // the view colours the links that carry traffic
    const fabric::Topology& topology = plan.scheduler.fabric->topology;
    std::vector<LiveLink> links;
    for (size_t i = 0; i < topology.links(); ++i) {
      const int32_t link = static_cast<int32_t>(i);
      links.push_back(LiveLink{topology.LinkName(link), topology.link(link).capacity_bytes_per_s});
    }
    feed->SetFabric(std::move(links));
  }
  return feed;
}

void PublishLive(const LiveFeed& feed, double wall_s, bool done, LiveSink* sink) {
  LiveSnapshot snapshot = feed.Snapshot();
  snapshot.wall_s = wall_s;
  snapshot.done = done;
  sink->Publish(std::move(snapshot));
}

}  // namespace

caf::actor SpawnInjector(ActorRuntime& runtime, const RunPlan& plan, const ClusterHandles& cluster,
                         const std::map<std::string, caf::actor>& nodes) {
  FaultInjectorSetup setup;
  setup.plan = plan.faults;
  setup.jobs = plan.jobs_known;
  setup.job_ids = plan.job_ids;
  setup.scheduler_options = plan.scheduler;
  setup.cluster = cluster;
  for (const std::string& node : plan.server_nodes) setup.server_is_local.push_back(node.empty());
  setup.nodes = nodes;
  return runtime.system().spawn(FaultInjectorActor, std::move(setup), runtime.clock(),
                                runtime.telemetry());
}

// With faults: the lossy network, made before any actor exists (actors register with it as they
// start). The checkpoint store and the injector are spawned with the other actors; the injector
// learns the scheduler once it exists.
struct FaultMachinery {
  std::unique_ptr<FaultNetwork> network;
};

namespace {

// Emulated and without faults nothing can take a lease away: a job commits a lease's work when it
// is granted (JobStart::commit_at_grant) and may keep its lease from round to round.
// A job under faults.recovery reports every lease, with what checkpoints and restarts cost it.
bool CommitsAtGrant(const RunPlan& plan) {
  return plan.runtime.emulated && plan.faults.empty() && !plan.recovery &&
         !plan.replay_job_failures;
}

// Emulated with faults whose every event is a server's crash (declared, drawn by a failure model,
// replayed from a failure trace), under faults.recovery or not: a failure cuts a standing lease
// as it cuts a granted one (JobStart::offers_standing). Not with anything that restarts a job or
// the scheduler from the checkpoint store (which a standing lease leaves behind), loses or slows
// messages, slows servers, or relets a lease mid-round (spares, continue_smaller).
bool StandsUnderFaults(const RunPlan& plan) {
  if (!plan.runtime.emulated || plan.faults.empty() || plan.replay_job_failures) return false;
  if (plan.scheduler.spare_servers > 0 || plan.scheduler.continue_smaller_fraction > 0) {
    return false;
  }
  return std::all_of(plan.faults.events.begin(), plan.faults.events.end(), [](const FaultEvent& e) {
    return e.kind == FaultKind::kCrash && e.target.kind == EndpointKind::kServer;
  });
}

// The actors around the scheduler: metrics, checkpoint store, workload, profiler.
ClusterHandles SpawnCluster(ActorRuntime& runtime, const RunPlan& plan,
                            std::vector<server_actor> servers,
                            std::shared_ptr<std::promise<RunRecords>> handover,
                            const caf::actor& fabric) {
  caf::actor_system& sys = runtime.system();
  ClusterHandles cluster;
  cluster.specs = plan.servers;
  cluster.servers = std::move(servers);
  cluster.metrics =
      sys.spawn(MetricsActor, std::move(handover), runtime.telemetry(), plan.jobs_known);
  // A replayed trace's attempts live in the jobs' specs: the workload spawns and supervises them.
  if (!plan.faults.empty() || plan.replay_job_failures) {
    cluster.checkpoints = sys.spawn(CheckpointStoreActor);
  }
  std::shared_ptr<const JobCompute> compute;
  if (plan.compute.enabled()) {
    compute =
        std::make_shared<const JobCompute>(JobCompute{plan.compute, plan.measured_leases, fabric});
  }
  // Without faults the workload sends jobs without actors; the scheduler spawns them this way.
  cluster.jobs =
      JobSpawner(plan.catalog, runtime.clock(), runtime.telemetry(), cluster.checkpoints, compute,
                 CommitsAtGrant(plan), StandsUnderFaults(plan) && !plan.scheduler.lease_log);
  cluster.jobs.set_recovery(plan.recovery);
  cluster.workload = sys.spawn(WorkloadActor, plan.source, plan.catalog,
                               ActorContext{runtime.clock(), runtime.telemetry()},
                               cluster.checkpoints, cluster.jobs);
  if (plan.profile_jobs) {
    cluster.profiler = sys.spawn(ProfilerActor, plan.profiler, plan.catalog, runtime.telemetry());
  }
  return cluster;
}

// A run that fails before its scheduler exists stops what it spawned.
void StopCluster(const ClusterHandles& cluster) {
  for (const server_actor& server : cluster.servers) {
    caf::anon_send_exit(server, caf::exit_reason::kill);
  }
  if (cluster.workload) caf::anon_send_exit(cluster.workload, caf::exit_reason::kill);
  for (const caf::actor& actor : {cluster.metrics, cluster.profiler}) {
    if (actor) caf::anon_send_exit(actor, caf::exit_reason::kill);
  }
}

// The run's records and counters into `result`.
void CollectResult(const RunPlan& plan, RunRecords records, const Telemetry& telemetry,
                   double wall_s, const FaultNetwork* network, RunResult* result) {
  summaries::ClusterRunSummary& summary = result->summary;
  summary = plan.identity;
  summary.set_end_reason(records.end.reason);
  summary.set_rounds(static_cast<int32_t>(records.end.rounds));
  summary.set_messages(static_cast<double>(telemetry.messages.load()));
  summary.set_events(static_cast<double>(telemetry.timed_events.load()));
  summary.set_wall_s(wall_s);
  if (wall_s > 0) {
    summary.set_events_per_s(summary.events() / wall_s);
    summary.set_messages_per_s(summary.messages() / wall_s);
  }
  Summarize(records.jobs, records.rounds, plan.capacity, &summary);
  result->jobs = std::move(records.jobs);
  result->rounds = std::move(records.rounds);
  result->leases = std::move(records.leases);
  result->faults = std::move(records.faults);
  result->links = std::move(records.links);
  result->job_network = std::move(records.job_network);
  result->job_recovery = std::move(records.job_recovery);
  if (plan.recovery) SummarizeRecovery(result->jobs, result->job_recovery, &summary);
  result->servers_down = std::move(records.servers_down);
  SummarizeFailures(result->servers_down, summary.makespan_s(), &summary);
  if (plan.scheduler.fabric) {
    SummarizeNetwork(FabricOutput{&plan.scheduler.fabric->topology, &result->links,
                                  &result->job_network, &plan.scheduler.fabric->slowdowns},
                     result->jobs, summary.makespan_s(), &summary);
  }
  if (network) {
    const NetworkCounters c = network->counters();
    summary.set_messages_dropped(static_cast<double>(c.dropped + c.partitioned));
    summary.set_messages_duplicated(static_cast<double>(c.duplicated));
    summary.set_messages_delayed(static_cast<double>(c.delayed));
  }
  summary.set_faults_injected(static_cast<int32_t>(result->faults.size()));
}

}  // namespace

Status ExecuteRun(RunPlan plan, const ExecuteOptions& options, RunResult* result) {
  // Refused before anything runs: troupe never replaces a folder it did not write.
  if (!plan.out_dir.empty()) {
    RETURN_IF_ERROR(CheckRunDirectory(plan.out_dir));
  }
  const bool what_if = plan.without_stragglers != nullptr;
  if (what_if) {
    // The replay runs first, quietly: the progress line and the live view follow the run itself.
    RunResult without;
    RETURN_IF_ERROR(ExecuteRun(std::move(*plan.without_stragglers), ExecuteOptions{}, &without));
    plan.without_stragglers.reset();
    result->jobs_without_stragglers = std::move(without.jobs);
  }
  // The external scheduler registers before the first round (docs/external-scheduler.md); the
  // session outlives the actors, whose mechanism asks it every round.
  std::unique_ptr<ExternalSession> external;
  if (options.external_scheduler) {
    RETURN_IF_ERROR(ExternalSession::Start(*options.external_scheduler, &plan, &external));
  }
  // A cluster this large walks more job entries a round than 4 KiB pages can map at once.
  if (plan.capacity.gpus >= kHugePagesFromGpus) PreferHugePages();
  FaultMachinery faults;  // outlives the runtime: actors use the network until they are gone
  std::unique_ptr<LiveFeed> live;  // outlives the runtime, like the network
  ActorRuntime runtime(plan.runtime);
  TelemetryWatch watching(options, runtime.telemetry());
  if (options.live) {
    live = MakeLiveFeed(plan);
    runtime.telemetry()->live = live.get();
  }
  if (plan.faults.HasLinkFaults()) {
    faults.network =
        std::make_unique<FaultNetwork>(plan.faults, plan.identity.seed(), runtime.clock());
    runtime.telemetry()->network = faults.network.get();
  }
  // Real compute: where every part ran, for nodes.csv (a caller's record, or one of our own).
  if (plan.compute.enabled() && !plan.measured_leases) {
    plan.measured_leases = std::make_shared<MeasuredLeaseLog>();
  }
  std::vector<server_actor> servers;
  std::map<std::string, caf::actor> nodes;
  RunHandle run_handle;  // after the runtime: exits before the runtime ends
  if (Status s = SpawnServers(runtime, plan, &servers, nodes, &run_handle); !s.ok()) {
    for (const server_actor& server : servers) caf::anon_send_exit(server, caf::exit_reason::kill);
    return s;
  }
  auto handover = std::make_shared<std::promise<RunRecords>>();
  std::future<RunRecords> records_future = handover->get_future();
  FabricHandle pacing;
  if (plan.scheduler.fabric && plan.compute.enabled()) {
    pacing.actor =
        runtime.system().spawn(FabricActor, plan.scheduler.fabric->topology, runtime.telemetry());
  }
  ClusterHandles cluster = SpawnCluster(runtime, plan, std::move(servers), handover, pacing.actor);
  // Agents register from here on; the workload waits for them (actors/agent/agent_service.hpp).
  std::unique_ptr<AgentService> agents;
  if (options.agents) {
    agents =
        std::make_unique<AgentService>(runtime.system(), cluster.workload, plan.catalog,
                                       plan.capacity.gpus, runtime.clock(), runtime.telemetry());
    if (Status s = agents->Start(*options.agents); !s.ok()) {
      agents.reset();
      StopCluster(cluster);
      return s;
    }
  }
  if (!plan.faults.empty()) cluster.injector = SpawnInjector(runtime, plan, cluster, nodes);
  caf::actor injector = cluster.injector;
  SchedulerOptions scheduler_options = plan.scheduler;
  // The lease log lists every round's parts as the servers granted them: every lease is granted.
  scheduler_options.standing_leases =
      (CommitsAtGrant(plan) || StandsUnderFaults(plan)) && !plan.scheduler.lease_log;
  scheduler_actor scheduler =
      runtime.system().spawn(SchedulerActor, std::move(scheduler_options), std::move(cluster),
                             runtime.clock(), runtime.telemetry());
  // The injector's handler takes an actor handle (a typed one would be another message type).
  if (injector) {
    TellAnon(runtime.telemetry(), injector, caf::put_atom::value,
             caf::actor_cast<caf::actor>(scheduler));
  }

  if (live) PublishLive(*live, runtime.WallSeconds(), false, options.live);
  const bool done = runtime.Drive([&] {
    if (live) PublishLive(*live, runtime.WallSeconds(), false, options.live);
    if (options.on_progress) options.on_progress(*runtime.telemetry());
  });
  if (agents) agents->Stop();  // Goodbye to the agents still connected; their proxies stop
  if (!done) {
    return Status::Internal("the emulation stalled at virtual time " +
                            std::to_string(runtime.telemetry()->virtual_s.load()) + " s");
  }
  CollectResult(plan, records_future.get(), *runtime.telemetry(), runtime.WallSeconds(),
                faults.network.get(), result);
  if (what_if) {
    SummarizeStragglers(result->jobs, result->jobs_without_stragglers,
                        CountStragglerFaults(result->faults), &result->summary);
  }
  if (live) PublishLive(*live, result->summary.wall_s(), true, options.live);
  if (plan.out_dir.empty()) return Status::Ok();
  if (what_if) {
    RETURN_IF_ERROR(
        StageStragglersCsv(plan.out_dir, result->jobs, result->jobs_without_stragglers));
  }
  if (plan.compute.enabled()) {
    RETURN_IF_ERROR(
        StageNodesCsv(plan.out_dir, CountByNode(plan.measured_leases->Copy(), plan.server_nodes)));
  }
  if (!result->servers_down.empty()) {
    RETURN_IF_ERROR(StageInterruptionsCsv(plan.out_dir, result->servers_down));
  }
  const FabricOutput fabric{plan.scheduler.fabric ? &plan.scheduler.fabric->topology : nullptr,
                            &result->links, &result->job_network,
                            plan.scheduler.fabric ? &plan.scheduler.fabric->slowdowns : nullptr};
  return WriteRunDirectory(plan.out_dir, result->summary, result->jobs, result->rounds,
                           plan.scheduler.lease_log ? &result->leases : nullptr,
                           plan.faults.empty() ? nullptr : &result->faults,
                           fabric.topology ? &fabric : nullptr,
                           plan.recovery ? &result->job_recovery : nullptr);
}

}  // namespace troupe
