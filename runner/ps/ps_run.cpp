#include "runner/ps/ps_run.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <caf/send.hpp>
#include <cstdio>
#include <filesystem>
#include <future>
#include <random>

#include "actors/fabric_actor.hpp"
#include "actors/ps/collector_actor.hpp"
#include "actors/ps/feed_actors.hpp"
#include "actors/ps/ps_fault_injector.hpp"
#include "actors/ps/ps_faults.hpp"
#include "actors/ps/ps_options_of.hpp"
#include "actors/ps/remote_shard.hpp"
#include "actors/ps/remote_supervisor.hpp"
#include "actors/ps/shard_actor.hpp"
#include "actors/ps/trainer_actor.hpp"
#include "base/status_macros.hpp"
#include "gpu/devices.hpp"
#include "runner/output_folder.hpp"
#include "runner/ps/ps_remote.hpp"
#include "runner/ps/ps_report.hpp"
#include "runner/ps/ps_results.hpp"
#include "runner/ps/ssd_folder.hpp"
#include "runner/run_directory.hpp"
#include "runtime/counted_send.hpp"
#include "runtime/live_feed.hpp"

namespace troupe {
namespace {

namespace fs = std::filesystem;
namespace ps = paramserver;

void PlanOptions(const config::RunConfig& cfg, PsPlan* plan) {
  plan->paramserver = cfg.paramserver();
  plan->options = PsOptionsOf(cfg.paramserver(), cfg.run().seed());
  const config::Run& r = cfg.run();
  plan->runtime.emulated = r.mode() == config::emulated;
  plan->runtime.time_scale = r.time_scale();
  plan->runtime.threads = r.threads();
  plan->mode = config::Mode_Name(r.mode());
  plan->seed = r.seed();
  plan->out_dir = r.out_dir();
}

// As for backends.compute: an HBM-PS in device memory that this build or machine cannot provide
// (no CUDA backends plugin, no GPU) is a bad config, said before anything runs. Only a config
// asking for it loads the plugin (listing the GPUs does).
Status CheckHbmDevice(const config::ParamServer& p, const std::string& config_name) {
  if (p.hbm_backend() != "cuda") return Status::Ok();
  const gpu::DeviceReport report = gpu::ListDevices();
  for (const gpu::DeviceInfo& d : report.devices) {
    if (d.kind == "cuda") return Status::Ok();
  }
  return Status::InvalidInput(config_name + ": paramserver.hbm_backend: 'cuda' cannot run here: " +
                              (report.cuda_status.empty() ? "no GPU found" : report.cuda_status));
}

Status ReadCriteo(const config::ParamServer& p, const std::string& config_name, PsPlan* plan) {
  std::vector<ps::Example> all;
  std::string skipped;
  ps::CriteoReadStats stats;
  const ps::OnError on_error = p.criteo_skip_bad_lines() ? ps::OnError::kSkip : ps::OnError::kStop;
  RETURN_IF_ERROR(ps::ReadCriteoTsv(p.criteo_file(), on_error, &all, &stats, &skipped,
                                    config_name + ": paramserver.criteo_file"));
  if (stats.skipped > 0) {
    spdlog::warn("{}: skipped {} malformed lines:\n{}", p.criteo_file(), stats.skipped, skipped);
  }
  PsOptions& o = plan->options;
  const int64_t global = int64_t{o.nodes} * o.batch_size;
  const int64_t holdout = std::min<int64_t>(p.holdout_examples(), static_cast<int64_t>(all.size()));
  const int64_t usable = static_cast<int64_t>(all.size()) - holdout;
  if (usable < global) {
    return Status::InvalidInput(config_name + ": paramserver.criteo_file: " + p.criteo_file() +
                                " has " + std::to_string(all.size()) + " examples; " +
                                std::to_string(holdout) +
                                " held out leave fewer than one global "
                                "batch (" +
                                std::to_string(global) + ")");
  }
  o.batches = std::min(o.batches, usable / global);
  plan->holdout.assign(all.end() - holdout, all.end());
  all.resize(static_cast<size_t>(o.batches * global));
  plan->train = std::make_shared<const std::vector<ps::Example>>(std::move(all));
  plan->data = "Criteo file " + fs::path(p.criteo_file()).filename().string();
  return Status::Ok();
}

Status Generate(const config::ParamServer& p, const std::string& config_name, PsPlan* plan) {
  ps::CriteoGeneratorOptions g;
  g.seed = plan->seed;
  g.zipf_skew = p.zipf_skew();
  g.keys_per_field = static_cast<uint64_t>(p.keys_per_field());
  const PsOptions& o = plan->options;
  StatusOr<ps::CriteoGenerator> stream = ps::CriteoGenerator::Create(g);
  if (!stream.ok()) {
    return Status::InvalidInput(config_name + ": paramserver: " + stream.status().message());
  }
  plan->train = std::make_shared<const std::vector<ps::Example>>(
      stream->Generate(o.batches * o.nodes * o.batch_size));
  g.seed = plan->seed ^ 0x5eed'0f'4e1d'0117ull;  // another stream of the same hidden model
  // The same options but the seed: cannot fail where the training stream did not.
  ASSIGN_OR_RETURN(ps::CriteoGenerator holdout, ps::CriteoGenerator::Create(g));
  plan->holdout = holdout.Generate(p.holdout_examples());
  plan->data = "generator (Zipf " + std::to_string(p.zipf_skew()).substr(0, 4) + ", " +
               std::to_string(p.keys_per_field()) + " keys per field)";
  return Status::Ok();
}

// Where the nodes' SSD-PS folders go: the config's ssd_dir, or scratch beside the run directory.
std::string SsdRoot(const PsPlan& plan) {
  static std::atomic<int> counter{0};
  if (!plan.options.ssd_dir.empty()) return plan.options.ssd_dir;
  if (!plan.out_dir.empty()) return StagingDirectory(plan.out_dir) + "/ssd";
  const std::string name =
      "troupe-ps-ssd-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  return (fs::temp_directory_path() / name).string();
}

Status OpenShards(const PsPlan& plan, std::vector<std::shared_ptr<ShardCore>>* cores) {
  for (int32_t m = 0; m < plan.options.nodes; ++m) {
    const fs::path dir = fs::path(plan.options.ssd_dir) / ("node-" + std::to_string(m));
    // Every run starts from an empty SSD-PS; a folder troupe did not write is never emptied.
    RETURN_IF_ERROR(ResetSsdNodeFolder(dir.string(), "paramserver.ssd_dir"));
    if (!plan.hosts.empty()) continue;  // the node hosting shard m opens it
    std::unique_ptr<ShardCore> core;
    RETURN_IF_ERROR(ShardCore::Open(plan.options, m, dir.string(), &core));
    cores->push_back(std::move(core));
  }
  return Status::Ok();
}

// Marks the scratch root inside the staging folder as troupe's, so that the staging folder of a
// run killed mid-way (its node folders in it) is still one the next run can tell for troupe's and
// remove (RemoveStaleStaging).
Status MarkScratchRoot(const PsPlan& plan, const std::string& root) {
  if (!plan.scratch_ssd || plan.out_dir.empty()) return Status::Ok();
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return Status::IoError(root + ": cannot create folder: " + ec.message());
  return WriteOutputMarker(root, kSsdRootKind);
}

// This run's identity in its stores (PsOptions::ssd_run_id): never 0, which no run draws.
uint64_t DrawRunId() {
  std::random_device device;
  const uint64_t id = (uint64_t{device()} << 32) ^ device() ^ static_cast<uint64_t>(::getpid());
  return id == 0 ? 1 : id;
}

// The fabric over the PS nodes: node n is fabric server n.
Status PlanPsFabric(const config::RunConfig& cfg, const std::string& config_name, PsPlan* plan) {
  if (!cfg.has_fabric()) return Status::Ok();
  const int32_t nodes = cfg.paramserver().nodes();
  if (cfg.fabric().link_priority() != config::fair) {
    return Status::InvalidInput(config_name +
                                ": fabric.link_priority: a parameter-server run's fabric actor "
                                "shares its links fairly; gpu_intensity is for cluster runs");
  }
  StatusOr<fabric::Topology> topology = fabric::Topology::Build(cfg.fabric(), nodes);
  if (!topology.ok()) {
    return Status::InvalidInput(config_name + ": " + topology.status().message() +
                                " (PS node n is fabric server n; paramserver.nodes is " +
                                std::to_string(nodes) + ")");
  }
  plan->fabric = std::make_shared<const fabric::Topology>(std::move(topology).value());
  return Status::Ok();
}

struct Spawned {
  std::vector<caf::actor> all;
};

// Spawns the collector and every node's actors (the shards in their nodes' processes when the
// plan names hosts), wires the trainers and starts the readers.
Status SpawnRun(ActorRuntime& runtime, const PsPlan& plan,
                const std::vector<std::shared_ptr<ShardCore>>& cores,
                std::shared_ptr<std::promise<PsRecords>> handover, Spawned* out) {
  caf::actor_system& sys = runtime.system();
  const PsOptions& o = plan.options;
  Telemetry* t = runtime.telemetry();
  const RunClock& clock = runtime.clock();
  caf::actor collector = sys.spawn(CollectorActor, o.nodes, std::move(handover), t);
  out->all.push_back(collector);
  caf::actor fabric;  // with a fabric block: the pulls, pushes and all-reduce between nodes
  if (plan.fabric) {
    fabric = sys.spawn(FabricActorOnClock, *plan.fabric, t, clock);
    out->all.push_back(fabric);
  }
  std::vector<caf::actor> shards, trainers, readers, partitioners;
  if (!plan.hosts.empty()) {
    RETURN_IF_ERROR(SpawnRemoteShards(runtime, plan, collector, &shards));
  }
  for (int32_t m = 0; m < o.nodes && plan.hosts.empty(); ++m) {
    ShardSetup setup;
    setup.shard = m;
    setup.options = o;
    setup.core = cores[m];
    setup.collector = collector;
    setup.clock = clock;
    setup.telemetry = t;
    setup.faults = PsNodeFaultsOf(plan.faults, m, o.nodes);
    shards.push_back(sys.spawn(ShardActor, std::move(setup)));
  }
  if (!plan.trainer_hosts.empty()) {
    PsFeeds feeds;
    const Status s = SpawnRemoteFeeds(runtime, plan, collector, shards, &feeds);
    trainers = std::move(feeds.trainers);
    partitioners = std::move(feeds.partitioners);
    readers = std::move(feeds.readers);
    if (!s.ok()) {  // the run stops what it spawned
      for (auto* group : {&shards, &trainers, &partitioners, &readers}) {
        out->all.insert(out->all.end(), group->begin(), group->end());
      }
      return s;
    }
  }
  for (int32_t n = 0; n < o.nodes && plan.trainer_hosts.empty(); ++n) {
    trainers.push_back(sys.spawn(TrainerActor, n, o, shards, collector, clock, t));
  }
  for (int32_t n = 0; n < o.nodes && plan.trainer_hosts.empty(); ++n) {
    caf::actor partitioner =
        sys.spawn(PartitionerActor, n, o, shards, trainers[n], collector, clock, t);
    readers.push_back(sys.spawn(ReaderActor, n, o, plan.train, partitioner, collector, clock, t));
    partitioners.push_back(std::move(partitioner));
  }
  if (!plan.faults.empty()) {
    out->all.push_back(sys.spawn(
        PsFaultInjectorActor,
        PsFaultInjectorSetup{plan.faults, o, shards, trainers, partitioners, collector, clock, t}));
  }
  if (!plan.hosts.empty() || !plan.trainer_hosts.empty()) {
    out->all.push_back(sys.spawn(
        PsRemoteSupervisorActor,
        PsRemoteSupervisorSetup{
            ShardSpawnOf(plan.paramserver, o, 0, collector, 0, clock.time_scale), plan.hosts,
            plan.trainer_hosts, shards, trainers, partitioners, readers, collector, clock, t}));
  }
  for (int32_t n = 0; n < o.nodes; ++n)
    TellAnon(t, trainers[n], PsPeers{trainers, readers[n], fabric});
  for (const caf::actor& reader : readers) TellAnon(t, reader, PsStart{o.batches});
  for (auto* group : {&shards, &trainers, &readers, &partitioners}) {
    out->all.insert(out->all.end(), group->begin(), group->end());
  }
  return Status::Ok();
}

// The shard actors own the cores: a crashed shard's core (its HBM-PS and MEM-PS) dies with it.
Status Drive(const PsPlan& plan, const ExecuteOptions& options,
             std::vector<std::shared_ptr<ShardCore>> cores, PsRecords* records,
             summaries::PsRunSummary* counters) {
  std::unique_ptr<LiveFeed> live;  // with --serve; outlives the runtime
  ActorRuntime runtime(plan.runtime);
  if (options.live) {
    live =
        std::make_unique<LiveFeed>("parameter server", plan.config_name, std::vector<LiveServer>{});
    live->MakePs(plan.options.batches, plan.options.nodes);
    runtime.telemetry()->live = live.get();
  }
  auto publish = [&](bool final) {
    if (!live) return;
    LiveSnapshot snapshot = live->Snapshot();
    snapshot.wall_s = runtime.WallSeconds();
    snapshot.virtual_s = runtime.telemetry()->virtual_s.load();
    snapshot.done = final;
    options.live->Publish(std::move(snapshot));
  };
  publish(false);
  auto handover = std::make_shared<std::promise<PsRecords>>();
  std::future<PsRecords> future = handover->get_future();
  Spawned spawned;
  const Status spawn = SpawnRun(runtime, plan, cores, std::move(handover), &spawned);
  cores.clear();
  if (!spawn.ok()) {
    for (const caf::actor& a : spawned.all) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    return spawn;
  }
  const bool done = runtime.Drive([&] {
    publish(false);
    if (options.on_progress) options.on_progress(*runtime.telemetry());
  });
  for (const caf::actor& a : spawned.all) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  if (!done) {
    return Status::Internal("the parameter-server run stalled at virtual time " +
                            std::to_string(runtime.telemetry()->virtual_s.load()) + " s");
  }
  *records = future.get();
  counters->set_wall_s(runtime.WallSeconds());
  counters->set_messages(static_cast<double>(runtime.telemetry()->messages.load()));
  counters->set_events(static_cast<double>(runtime.telemetry()->timed_events.load()));
  publish(true);
  if (records->failure.empty()) return Status::Ok();
  const bool bad_input = records->failure.rfind("paramserver.", 0) == 0;
  return bad_input ? Status::InvalidInput(plan.config_name + ": " + records->failure)
                   : Status::IoError(records->failure);
}

}  // namespace

Status PlanPsRun(const config::RunConfig& cfg, const std::string& config_name, PsPlan* plan) {
  plan->config_name = config_name;
  PlanOptions(cfg, plan);
  if (Status s = ps::CtrModel::Check(plan->options.model); !s.ok()) {
    return Status::InvalidInput(config_name + ": paramserver: " + s.message());
  }
  const config::ParamServer& p = cfg.paramserver();
  RETURN_IF_ERROR(CheckHbmDevice(p, config_name));
  RETURN_IF_ERROR(CheckSsdDir(p.ssd_dir(), p.nodes(), config_name + ": paramserver.ssd_dir"));
  if (cfg.has_faults()) {
    FaultUniverse universe;
    universe.ps_nodes = p.nodes();
    if (Status s = BuildFaultPlan(cfg.faults(), plan->seed, universe, &plan->faults); !s.ok()) {
      return Status::InvalidInput(config_name + ": " + s.message());
    }
    for (const FaultEvent& e : plan->faults.events) {
      if (e.target.kind != EndpointKind::kPs) {
        return Status::InvalidInput(config_name + ": fault '" + e.Describe() +
                                    "': a parameter-server run takes crash, slow and disk faults "
                                    "on ps:N targets");
      }
    }
    plan->options.durable_updates = PlanCrashesPsNodes(plan->faults, p.nodes());
  }
  RETURN_IF_ERROR(PlanPsHosts(cfg, config_name, plan));
  RETURN_IF_ERROR(PlanPsFabric(cfg, config_name, plan));
  if (!p.criteo_file().empty()) return ReadCriteo(p, config_name, plan);
  return Generate(p, config_name, plan);
}

Status ExecutePsRun(PsPlan plan, const ExecuteOptions& options, PsRunResult* result) {
  if (!plan.out_dir.empty()) {
    RETURN_IF_ERROR(CheckRunDirectory(plan.out_dir));
    // The SSD-PS files live in the staging folder until the run commits (SsdRoot).
    RETURN_IF_ERROR(PrepareStagingDirectory(plan.out_dir));
  }
  const std::string root = SsdRoot(plan);
  plan.scratch_ssd = plan.options.ssd_dir.empty();
  plan.options.ssd_dir = root;
  plan.options.ssd_run_id = DrawRunId();
  std::vector<std::shared_ptr<ShardCore>> cores;
  Status status = MarkScratchRoot(plan, root);
  if (status.ok()) status = OpenShards(plan, &cores);
  PsRecords records;
  if (status.ok()) status = Drive(plan, options, std::move(cores), &records, &result->summary);
  cores.clear();
  std::error_code ec;
  if (plan.scratch_ssd) fs::remove_all(root, ec);
  if (!status.ok()) {
    if (!plan.out_dir.empty()) fs::remove_all(StagingDirectory(plan.out_dir), ec);
    return status;
  }
  BuildPsResult(plan, std::move(records), result);
  if (plan.out_dir.empty()) return Status::Ok();
  return WritePsRunDirectory(plan.out_dir, result->summary, result->batches,
                             plan.faults.empty() ? nullptr : &result->faults);
}

}  // namespace troupe
